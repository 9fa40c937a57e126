#!/bin/bash
JAR=${JAR:-/tmp/w/A.jar} DUR=4 /tmp/w/pe.sh ${1:-64} ${EXTRA} > /tmp/w/cs.res &
sleep 4.5
python3 - <<'PY'
import os, time, glob
def snap():
    d={}
    for p in os.popen("pgrep -f org.rds4j.compare.Main").read().split():
        for t in glob.glob(f"/proc/{p}/task/*"):
            try:
                n=open(t+"/comm").read().strip(); s=open(t+"/stat").read().rsplit(')',1)[1].split()
                st=open(t+"/status").read().split('\n')
                v=[int(l.split()[1]) for l in st if 'voluntary_ctxt' in l]
                d[(p,t.split('/')[-1],n)]=(int(s[11])+int(s[12]),v[0],v[1])
            except Exception: pass
    return d
a=snap(); time.sleep(2); b=snap()
for k in sorted(b):
    if k in a:
        c=(b[k][0]-a[k][0])/2; 
        if c>1: print(f"{k[0]} {k[2]:18s} cpu% {c:5.0f} vol/s {(b[k][1]-a[k][1])/2:8.0f} invol/s {(b[k][2]-a[k][2])/2:7.0f}")
PY
wait; cat /tmp/w/cs.res
