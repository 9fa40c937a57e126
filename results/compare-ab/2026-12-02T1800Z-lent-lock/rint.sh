#!/bin/bash
# rint.sh JAR "jvmopts" RATE DUR: request/reply at a rate; per-200ms windows: p50, p99, max (us); then summary steady
JAR=$1; JO=$2; RATE=$3; DUR=${4:-6}; PORT=$((27000 + RANDOM % 2000))
java $JO -jar $JAR stress --bind 127.0.21.2:4000 --duration $((DUR+3)) --tcp-port $PORT > /tmp/w/ri-p-$$.out 2>&1 &
sleep 1.5
java $JO -jar $JAR stress --bind 127.0.21.1:4000 --peer 127.0.21.2:4000 --tcp-port $PORT --duration $DUR --size 64 --rate $RATE --report-interval 200ms --json > /tmp/w/ri-a-$$.out 2>&1
wait
python3 - /tmp/w/ri-a-$$.out <<'PY'
import json,sys
rows=[]; s=None
for l in open(sys.argv[1]):
  try: d=json.loads(l)
  except: continue
  if d.get("type")=="interval" and d.get("rtt_us") and d["t_s"]>2: rows.append(d["rtt_us"])
  if d.get("type")=="summary": s=d
mx=sorted(r["max"] for r in rows)
over=sum(1 for r in rows if r["max"]>1000)
st=(s.get("steady") or {}).get("rtt_us") or {}
print("windows %d, max>1ms in %d, median window max %.0f us, worst %.0f | steady p50 %.1f p90 %.1f p99 %.1f max %.0f | cpu %.1f%%" % (len(rows), over, mx[len(mx)//2], mx[-1], st.get("p50",0), st.get("p90",0), st.get("p99",0), st.get("max",0), s["cpu_pct"]))
PY
