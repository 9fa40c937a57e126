#!/bin/bash
# stx.sh JAR "active options": rds stress, active node with the given options; steady figures
JAR=$1; O=$2; PORT=$((27000 + RANDOM % 2000))
java -jar $JAR stress --bind 127.0.21.2:4000 --duration 8 --tcp-port $PORT > /tmp/w/sx-p-$$.out 2>&1 &
P=$!
sleep 1.5
java -jar $JAR stress --bind 127.0.21.1:4000 --peer 127.0.21.2:4000 --tcp-port $PORT --duration 5 $O --json > /tmp/w/sx-a-$$.out 2>&1
wait $P
grep '"type":"summary"' /tmp/w/sx-a-$$.out | python3 -c '
import json,sys
d=json.loads(sys.stdin.read()); s=d.get("steady") or {}
sr=s.get("rtt_us") or {}
print("steady %.3fM p50 %s p90 %s p99 %s ok %s" % (s.get("msgs_per_s",0)/1e6, sr.get("p50"), sr.get("p90"), sr.get("p99"), d["ok"]))'
