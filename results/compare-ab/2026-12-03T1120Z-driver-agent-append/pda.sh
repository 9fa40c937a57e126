#!/bin/bash
# pda.sh SIZE: rds4j pair through drivers (default config + --driver), system-wide perf over 3 s of the window,
# JIT symbols from jcmd Compiler.perfmap of every JVM; SRCX/SINKX extra args per side (default --driver both);
# XTOOL: JVM options added to every JVM (drivers too), e.g. -Dx.readeryields=20 for reader-yields.patch; WU: --warmup s (default 2);
# PSLEEP: seconds after the source starts before perf records (default 5)
JAR=${JAR:-/work/main/compare/target/compare.jar}
SIZE=${1:-64}
OPTS="--io block --agent-idle backoff --idle yield"
P=$((21000 + RANDOM % 1000))
common="--port $P --tcp-port $((P+30)) --warmup ${WU:-2} --duration ${DUR:-5} --grace 1 --start-timeout 40 --size $SIZE"
export JAVA_TOOL_OPTIONS="-XX:+UnlockDiagnosticVMOptions -XX:+PreserveFramePointer $XTOOL"
java -cp $JAR org.rds4j.compare.Main ${PSYS:-rds4j}-sink $common $OPTS ${SINKX---driver} --timeout 60 > /tmp/w/sink.out 2>/tmp/w/sink.err &
SP=$!
for i in $(seq 200); do grep -q READY /tmp/w/sink.out && break; sleep 0.1; done
java -cp $JAR org.rds4j.compare.Main ${ASYS:-rds4j}-source $common $OPTS ${SRCX---driver} --timeout 60 > /tmp/w/src.out 2>/tmp/w/src.err &
AP=$!
if [ -n "$PERF" ]; then
  sleep ${PSLEEP:-5}
  perf record -a -F 1999 -g -o /tmp/w/all.data -- sleep 3 2>/dev/null
  for j in $(pgrep -f org.rds4j.compare.Main); do jcmd $j Compiler.perfmap >/dev/null 2>&1 & done; wait
fi
wait $SP; wait $AP
grep RESULT /tmp/w/sink.out | python3 -c "import json,sys; r=json.loads(sys.stdin.read()[7:]); print('msgs/s', r['msgs_per_s'], 'cpu', r['cpu_s'])"
grep RESULT /tmp/w/src.out | python3 -c "import json,sys; r=json.loads(sys.stdin.read()[7:]); print('src cpu', r.get('cpu_s'))"
