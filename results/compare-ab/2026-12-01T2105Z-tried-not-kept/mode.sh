#!/bin/bash
# mode.sh SIZE [args]: one pair run; prints rate, per-thread CPU% and context switches, key counters
JAR=${JAR:-/tmp/w/A.jar} DUR=4 /tmp/w/pe.sh ${SIZE:-1024} "$@" > /tmp/w/mode.res 2>/dev/null &
sleep 4.5
python3 - <<'PY' > /tmp/w/mode.thr
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
out=[]
for k in sorted(b):
    if k in a:
        c=(b[k][0]-a[k][0])/2
        if c>1: out.append(f"{k[2][:12]}:{c:.0f}%/{(b[k][1]-a[k][1])/2:.0f}v/{(b[k][2]-a[k][2])/2:.0f}i")
print(' '.join(out))
PY
wait
r=$(head -1 /tmp/w/mode.res | awk '{print $2}')
c=$(cat /tmp/w/sink.err /tmp/w/src.err | grep -o 'send_caller_cycles=[0-9]*\|send_queue_full=[0-9]*\|recv_ring_spill=[0-9]*\|send_ack_only=[0-9]*\|tcp_sndbuf_full=[0-9]*' | xargs)
echo "$r $(cat /tmp/w/mode.thr) $c"
