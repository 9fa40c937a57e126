#!/bin/bash
# pm.sh SIZE SECS MODE: the log model (model/LogModel) against compare's nio-sink
SIZE=$1; SECS=$2; MODE=$3
JAR=${JAR:-/tmp/w/head-d5b.jar}
JO="-Xms512m -Xmx512m -XX:+UseG1GC -Djava.net.preferIPv4Stack=true"
O="--port 20080 --warmup 2 --duration $SECS --grace 1 --start-timeout 40 --size $SIZE --io block --timeout 200"
java $JO -cp $JAR org.rds4j.compare.Main nio-sink $O > /tmp/w/msink.out 2>/tmp/w/msink.err & S=$!
for i in $(seq 100); do grep -q READY /tmp/w/msink.out 2>/dev/null && break; sleep 0.2; done
java $JO $MOPTS -cp /tmp/w/model LogModel 127.0.0.2 20080 $SIZE $((SECS + 4)) $MODE > /tmp/w/msrc.out 2>&1 & C=$!
wait $S; kill $C 2>/dev/null; wait $C 2>/dev/null
grep -o '"msgs_per_s":[0-9]*' /tmp/w/msink.out; grep -v "^$" /tmp/w/msrc.out | head -3
