#!/bin/bash
# str.sh JAR "jvm opts" RATE: request/reply at a rate; cpu % of both nodes, steady rtt, context switches/s
JAR=$1; JO=$2; RATE=$3; PORT=$((27000 + RANDOM % 2000))
java $JO -jar $JAR stress --bind 127.0.21.2:4000 --duration 9 --tcp-port $PORT --json > /tmp/w/rp-$$.out 2>&1 &
P=$!; sleep 1.5; (vmstat 1 7 > /tmp/w/vmr-$$.txt &)
java $JO -jar $JAR stress --bind 127.0.21.1:4000 --peer 127.0.21.2:4000 --tcp-port $PORT --duration 6 --size 64 --rate $RATE --json > /tmp/w/ra-$$.out 2>&1
wait $P
python3 - /tmp/w/ra-$$.out /tmp/w/rp-$$.out /tmp/w/vmr-$$.txt <<'PY'
import json,sys
a=[json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"type":"summary"')][0]
p=[json.loads(l) for l in open(sys.argv[2]) if l.startswith('{"type":"summary"')][0]
vm=[l.split() for l in open(sys.argv[3]).read().splitlines()[2:]]
cs=sum(int(x[11]) for x in vm[-3:])/3
r=(a.get("steady") or {}).get("rtt_us") or {}
print("cpu active %.1f%% passive %.1f%% (of 2 cores) | p50 %.1f p90 %.1f p99 %.1f us | %.0fk cs/s" % (a["cpu_pct"], p["cpu_pct"], r.get("p50",0), r.get("p90",0), r.get("p99",0), cs/1000))
PY
