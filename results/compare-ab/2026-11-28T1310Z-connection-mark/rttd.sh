#!/bin/bash
# rttd.sh [--driver] [more rds4j options]: one 64 B ping-pong like run.sh's rtt case, per-thread CPU of all java processes over 3 s mid-run; WRT: --warmup-rt (default 20000)
JAR=${JAR:-/work/main/compare/target/compare.jar}
JO="-Xms512m -Xmx512m -XX:+UseG1GC -Djava.net.preferIPv4Stack=true --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/jdk.internal.misc=ALL-UNNAMED -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -XX:+PreserveFramePointer"
O="--port 20400 --tcp-port 20430 --warmup 4 --duration ${DUR:-5} --grace 1 --start-timeout 40 --size 64 --warmup-rt ${WRT:-20000} --rt ${RT:-200000} --io block --agent-idle backoff --idle yield $*"
java $JO -cp $JAR org.rds4j.compare.Main rds4j-rtt-server $O --timeout 200 > ${W:-/tmp/w}/rs.out 2>${W:-/tmp/w}/rs.err & S=$!
for i in $(seq 100); do grep -q READY ${W:-/tmp/w}/rs.out 2>/dev/null && break; sleep 0.2; done
java $JO -cp $JAR org.rds4j.compare.Main rds4j-rtt-client $O --timeout 180 > ${W:-/tmp/w}/rc.out 2>${W:-/tmp/w}/rc.err & C=$!
if [ -n "$PERF" ]; then sleep 7; perf record -F 4999 -g -a -o ${W:-/tmp/w}/perf.rtt -- sleep 3 >/dev/null 2>&1; fi
if [ -n "$CPU" ]; then sleep ${CPUAT:-6}; python3 "$(dirname "$0")"/../2026-11-28T0700Z-sender-transmits-small-streams/thcpu.py 3 $(pgrep java | tr '\n' ' ') ; fi
wait $C; kill $S 2>/dev/null; wait $S 2>/dev/null
grep -o '"p50_us":[0-9.]*,"p90_us":[0-9.]*,"p99_us":[0-9.]*' ${W:-/tmp/w}/rc.out || tail -3 ${W:-/tmp/w}/rc.err
