#!/bin/bash
# pn.sh SIZE SECS: a raw NIO one-way pair (compare.jar nio-sink and nio-source, --io block as compare runs it)
SIZE=$1; SECS=$2; shift 2
JAR=${JAR:-/work/main/compare/target/compare.jar}
JO="-Xms512m -Xmx512m -XX:+UseG1GC -Djava.net.preferIPv4Stack=true"
O="--port 20080 --warmup 2 --duration $SECS --grace 1 --start-timeout 40 --size $SIZE --io block --timeout 200 $*"
java $JO -cp $JAR org.rds4j.compare.Main nio-sink $O > /tmp/w/nsink.out 2>/tmp/w/nsink.err & S=$!
for i in $(seq 100); do grep -q READY /tmp/w/nsink.out 2>/dev/null && break; sleep 0.2; done
java $JO -cp $JAR org.rds4j.compare.Main nio-source $O > /tmp/w/nsrc.out 2>/tmp/w/nsrc.err & C=$!
wait $C; wait $S
grep -o '"msgs_per_s":[0-9]*' /tmp/w/nsink.out
