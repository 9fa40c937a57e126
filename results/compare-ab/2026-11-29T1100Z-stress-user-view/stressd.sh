#!/bin/bash
# stressd.sh JAR MODE: stress10.sh's run with both nodes attached to one `rds driver` (its own directory), of the same jar
JAR=$1; MODE=$2; PORT=$((27000 + RANDOM % 2000)); DIR=/dev/shm/rds4j-st-$$
case $MODE in rr64) O="--size 64";; ow64) O="--size 64 --one-way";; ow1k) O="--size 1024 --one-way";; esac
java -jar $JAR driver --dir $DIR --tcp-port $PORT > /tmp/w/st-d.out 2>&1 & D=$!
sleep 2
java -jar $JAR stress --driver $DIR --bind 127.0.21.2:4000 --duration 14 > /tmp/w/st-p.out 2>&1 &
P=$!
sleep 1.5
java -jar $JAR stress --driver $DIR --bind 127.0.21.1:4000 --peer 127.0.21.2:4000 $O --json > /tmp/w/st-a.out 2>&1
wait $P; kill $D; wait $D 2>/dev/null; rm -rf $DIR
grep "\"type\":\"summary\"" /tmp/w/st-a.out | python3 -c '
import json,sys
d=json.loads(sys.stdin.read())
r=d.get("rtt_us") or {}
print("msgs/s=%.0f lost=%s p50=%s p99=%s" % (d["msgs_per_s"], d["lost"], r.get("p50"), r.get("p99")))'
