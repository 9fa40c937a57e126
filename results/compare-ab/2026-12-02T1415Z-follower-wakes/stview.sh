#!/bin/bash
# stview.sh JAR MODE(rr64|ow64|ow1k): rds stress with its defaults; the summary's whole-run and steady figures
JAR=$1; MODE=$2; PORT=$((27000 + RANDOM % 2000))
case $MODE in rr64) O="--size 64";; ow64) O="--size 64 --one-way";; ow1k) O="--size 1024 --one-way";; esac
java -jar $JAR stress --bind 127.0.21.2:4000 --duration 12 --tcp-port $PORT > /tmp/w/st-p-$$.out 2>&1 &
P=$!
sleep 1.5
java -jar $JAR stress --bind 127.0.21.1:4000 --peer 127.0.21.2:4000 --tcp-port $PORT $O --json > /tmp/w/st-a-$$.out 2>&1
wait $P
grep '"type":"summary"' /tmp/w/st-a-$$.out | python3 -c '
import json,sys
d=json.loads(sys.stdin.read()); s=d.get("steady") or {}
r=d.get("rtt_us") or {}; sr=s.get("rtt_us") or {}
print("whole %.2fM p50 %s p99 %s | steady %.2fM p50 %s p99 %s" % (d["msgs_per_s"]/1e6, r.get("p50"), r.get("p99"), s.get("msgs_per_s",0)/1e6, sr.get("p50"), sr.get("p99")))'
