#!/bin/bash
# nio.sh SIZE: raw NIO pair of the comparison suite (--io block, 2 s warm-up + 4 s); prints the sink's RESULT rate
JAR=${JAR:-/work/main/compare/target/compare.jar}
SIZE=${1:-64}; P=$((23000 + RANDOM % 1000))
common="--port $P --warmup 2 --duration 4 --grace 1 --start-timeout 40 --size $SIZE --io block"
java -cp $JAR org.rds4j.compare.Main nio-sink $common --timeout 60 > /tmp/w/nsink.out 2>&1 &
SP=$!
for i in $(seq 100); do grep -q READY /tmp/w/nsink.out && break; sleep 0.1; done
java -cp $JAR org.rds4j.compare.Main nio-source $common --timeout 60 > /tmp/w/nsrc.out 2>&1
wait $SP
grep RESULT /tmp/w/nsink.out | grep -o '"msgs_per_s":[0-9.]*'
