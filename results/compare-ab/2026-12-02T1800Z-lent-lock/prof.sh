#!/bin/bash
# prof.sh JAR "jvmopts" RATE: per-thread CPU and context switches (2 s, both nodes) during request/reply at a rate
JAR=$1; JO=$2; RATE=$3; PORT=$((27000 + RANDOM % 2000))
java $JO -jar $JAR stress --bind 127.0.21.2:4000 --duration 10 --tcp-port $PORT > /tmp/w/pp.out 2>&1 & P=$!; sleep 1.5
java $JO -jar $JAR stress --bind 127.0.21.1:4000 --peer 127.0.21.2:4000 --tcp-port $PORT --duration 7 --size 64 --rate $RATE --json > /tmp/w/pa.out 2>&1 & A=$!
sleep 3.5; (bash /tmp/w/thr.sh $A > /tmp/w/t1.txt &) ; (bash /tmp/w/thr.sh $P > /tmp/w/t2.txt &); (bash /tmp/w/csw.sh $A > /tmp/w/c1.txt &); bash /tmp/w/csw.sh $P > /tmp/w/c2.txt; sleep 0.3
echo "active:"; paste /tmp/w/t1.txt; cat /tmp/w/c1.txt | grep -v "Compiler\|Periodic\|^java"; echo "passive:"; cat /tmp/w/t2.txt; cat /tmp/w/c2.txt | grep -v "Compiler\|Periodic\|^java"; wait
