#!/bin/bash
# infoab.sh JAR: a 64 B pair for 8 s; rds info --json of the source stack read at 3 s and 7 s
JAR=$1
(JAR=$JAR NOCPU=1 WAIT=1 bash /tmp/w/pe.sh 64 8 > /tmp/w/infoab.out 2>&1) &
sleep 5; java -jar /work/main/samples/target/rds.jar info --json > /tmp/w/info1.json 2>/dev/null
sleep 4; java -jar /work/main/samples/target/rds.jar info --json > /tmp/w/info2.json 2>/dev/null
wait
tail -1 /tmp/w/infoab.out
python3 - <<'PY'
import json
a=json.load(open('/tmp/w/info1.json')); b=json.load(open('/tmp/w/info2.json'))
def stacks(d): return {s.get('name'): s for s in (d['stacks'] if isinstance(d,dict) and 'stacks' in d else d)}
sa=stacks(a); sb=stacks(b)
for n in sb:
    if n not in sa: continue
    ca=sa[n].get('counters',{}); cb=sb[n].get('counters',{})
    d={k: cb[k]-ca.get(k,0) for k in cb if isinstance(cb[k],(int,float)) and cb[k]-ca.get(k,0)!=0}
    print(n, {k:d[k] for k in sorted(d)})
PY
