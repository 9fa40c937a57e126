#!/bin/bash
# sa.sh SIZE ASYS PSYS: one pair (ASYS source -> PSYS sink, e.g. rds4j wire = the sending side alone); XOPTS to both; prints the sink's rate
JAR=${JAR:-/work/main/compare/target/compare.jar}
SIZE=$1; ASYS=$2; PSYS=$3
OPTS="--io block --agent-idle backoff --idle yield"
P=$((21000 + RANDOM % 1000))
common="--port $P --tcp-port $((P+30)) --warmup 2 --duration ${DUR:-4} --grace 1 --start-timeout 40 --size $SIZE"
java $XOPTS -cp $JAR org.rds4j.compare.Main $PSYS-sink $common $OPTS --timeout 60 > /tmp/w/sink.out 2>/tmp/w/sink.err &
SP=$!
for i in $(seq 100); do grep -q READY /tmp/w/sink.out && break; sleep 0.1; done
java $XOPTS -cp $JAR org.rds4j.compare.Main $ASYS-source $common $OPTS --timeout 60 > /tmp/w/src.out 2>/tmp/w/src.err
wait $SP
grep RESULT /tmp/w/sink.out | grep -o '"msgs_per_s":[0-9]*' | cut -d: -f2
