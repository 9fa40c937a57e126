#!/bin/bash
# stcpu.sh JAR SIZE: rds stress one-way, per-thread CPU of both nodes over 3 s
JAR=$1; SIZE=$2; PORT=$((27000 + RANDOM % 2000))
java -jar $JAR stress --bind 127.0.21.2:4000 --duration 8 --tcp-port $PORT > /tmp/w/st-p.out 2>&1 &
P=$!
sleep 1.5
java -jar $JAR stress --bind 127.0.21.1:4000 --peer 127.0.21.2:4000 --tcp-port $PORT --duration 6 --size $SIZE --one-way --json > /tmp/w/st-a.out 2>&1 &
A=$!
sleep 2.5
python3 /tmp/w/thcpu.py 3 $P $A
wait $A; wait $P
grep '"type":"summary"' /tmp/w/st-a.out | grep -o '"msgs_per_s":[0-9.]*'
