#!/bin/bash
# feed.sh SIZE SECS: RdsFeed (an ideal RDS sender) into compare's rds4j-sink (default configuration)
SIZE=$1; SECS=$2; shift 2
JAR=${JAR:-/work/main/compare/target/compare.jar}
JO="-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -XX:+PreserveFramePointer -Xms512m -Xmx512m -XX:+UseG1GC -Djava.net.preferIPv4Stack=true --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/jdk.internal.misc=ALL-UNNAMED"
O="--port 20080 --tcp-port 20110 --warmup 2 --duration $SECS --grace 1 --start-timeout 40 --size $SIZE --io block --agent-idle backoff --idle yield --timeout 200 $*"
java $JO -cp $JAR org.rds4j.compare.Main rds4j-sink $O > /tmp/w/fsink.out 2>/tmp/w/fsink.err & S=$!
for i in $(seq 100); do grep -q READY /tmp/w/fsink.out 2>/dev/null && break; sleep 0.2; done
java -Xms512m -Xmx512m $FOPTS -cp /tmp/w/model2:$JAR RdsFeed $SIZE $((SECS + 4)) > /tmp/w/fsrc.out 2>&1 & C=$!
sleep ${WAIT:-4}; [ -z "$NOCPU" ] && python3 /tmp/w/ctx.py 3 $(pgrep -f "RdsFeed|rds4j-sink" | tr '\n' ' ')
if [ -n "$PERF" ]; then perf record -F 2999 -g -a -o /tmp/w/perf.feed -- sleep 4 >/dev/null 2>&1; fi
wait $S; kill $C 2>/dev/null; wait $C 2>/dev/null
grep -o '"msgs_per_s":[0-9]*\|"seq_errors":[0-9]*' /tmp/w/fsink.out | tr '\n' ' '; echo; tail -n 3 /tmp/w/fsrc.out
