#!/bin/bash
# drain.sh SIZE SECS: compare's rds4j-source (default configuration) into RdsDrain (an ideal RDS receiver)
SIZE=$1; SECS=$2; shift 2
JAR=${JAR:-/work/main/compare/target/compare.jar}
JO="-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -XX:+PreserveFramePointer -Xms512m -Xmx512m -XX:+UseG1GC -Djava.net.preferIPv4Stack=true --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/jdk.internal.misc=ALL-UNNAMED"
O="--port 20080 --tcp-port 20110 --warmup 2 --duration $SECS --grace 1 --start-timeout 40 --size $SIZE --io block --agent-idle backoff --idle yield --timeout 200 $*"
java -Xms512m -Xmx512m -cp /tmp/w/model2:$JAR RdsDrain $((SECS + 2)) > /tmp/w/dsink.out 2>/tmp/w/dsink.err & S=$!
for i in $(seq 100); do grep -q READY /tmp/w/dsink.out 2>/dev/null && break; sleep 0.2; done
java $JO -cp $JAR org.rds4j.compare.Main rds4j-source $O > /tmp/w/dsrc.out 2>/tmp/w/dsrc.err & C=$!
sleep ${WAIT:-4}; [ -z "$NOCPU" ] && python3 /tmp/w/ctx.py 3 $S $C
if [ -n "$PERF" ]; then perf record -F 2999 -g -a -o /tmp/w/perf.drain -- sleep 4 >/dev/null 2>&1; fi
wait $S; kill $C 2>/dev/null; wait $C 2>/dev/null
grep '"msgs_per_s"' /tmp/w/dsink.out
