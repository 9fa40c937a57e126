#!/bin/bash
# send.sh SIZE SECS: rds4j's sending side alone: compare.jar rds4j-source (default configuration) into the ideal wire-sink (run.sh's rds4j-send); NOCPU, PERF and XOPTS as in recv.sh
SIZE=$1; SECS=$2; shift 2
JAR=${JAR:-/work/main/compare/target/compare.jar}
export JAVA_TOOL_OPTIONS="$XOPTS -XX:+UnlockDiagnosticVMOptions -XX:+PreserveFramePointer"
JO="-Xms512m -Xmx512m -XX:+UseG1GC -Djava.net.preferIPv4Stack=true --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/jdk.internal.misc=ALL-UNNAMED"
O="--port 20080 --tcp-port 20110 --warmup 2 --duration $SECS --grace 1 --start-timeout 40 --size $SIZE --io block --agent-idle backoff --idle yield --timeout 200 $*"
java $JO -cp $JAR org.rds4j.compare.Main wire-sink $O > /tmp/w/ssink.out 2>/tmp/w/ssink.err & S=$!
for i in $(seq 100); do grep -q READY /tmp/w/ssink.out 2>/dev/null && break; sleep 0.2; done
java $JO -cp $JAR org.rds4j.compare.Main rds4j-source $O > /tmp/w/ssrc.out 2>/tmp/w/ssrc.err & C=$!
sleep ${WAIT:-5}
[ -z "$NOCPU" ] && python3 $(dirname $0)/../2026-11-29T0700Z-send-ring-as-queue/thcpu.py 4 $(pgrep -f org.rds4j.compare.Main | tr '\n' ' ')
if [ -n "$PERF" ]; then perf record -F 2999 -g -a -o /tmp/w/perf.send -- sleep 4 >/dev/null 2>&1; for p in $(pgrep -f org.rds4j.compare.Main); do jcmd $p Compiler.perfmap >/dev/null 2>&1; done; fi
wait $C; wait $S
grep -o '"msgs_per_s":[0-9]*' /tmp/w/ssink.out
