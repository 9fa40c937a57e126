#!/bin/bash
# stress.sh JAR MODE(rr64|ow64|ow1k): rds stress with its defaults, prints the summary figures
JAR=$1; MODE=$2; PORT=$((27000 + RANDOM % 2000))
case $MODE in rr64) O="--size 64";; ow64) O="--size 64 --one-way";; ow1k) O="--size 1024 --one-way";; esac
java -jar $JAR stress --bind 127.0.21.2:4000 --duration 5 --tcp-port $PORT > /tmp/w/st-p.out 2>&1 &
P=$!
sleep 1.5
java -jar $JAR stress --bind 127.0.21.1:4000 --peer 127.0.21.2:4000 --tcp-port $PORT --duration 3 $O --json > /tmp/w/st-a.out 2>&1
wait $P
grep "\"type\":\"summary\"" /tmp/w/st-a.out | python3 -c '
import json,sys
d=json.loads(sys.stdin.read())
r=d.get("rtt_us") or {}
print("msgs/s=%.0f lost=%s p50=%s p99=%s cores=%s" % (d["msgs_per_s"], d["lost"], r.get("p50"), r.get("p99"), d.get("cpu_cores")))'
