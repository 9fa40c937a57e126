#!/bin/bash
# pe.sh SIZE [extra args]: rds4j pair (default config) with perf on both sides; JAR, XOPTS, PERF=1; WU: --warmup s (default 2); SRCJ/SINKJ: JVM options of one side
JAR=${JAR:-/work/main/compare/target/compare.jar}
SIZE=${1:-64}; shift
OPTS="--io block --agent-idle backoff --idle yield"
P=$((21000 + RANDOM % 1000))
common="--port $P --tcp-port $((P+30)) --warmup ${WU:-2} --duration ${DUR:-4} --grace 1 --start-timeout 40 --size $SIZE"
XO="-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -XX:+PreserveFramePointer $XOPTS"
java $XO $SINKJ -cp $JAR org.rds4j.compare.Main ${PSYS:-rds4j}-sink $common $OPTS "$@" --timeout 60 > /tmp/w/sink.out 2>/tmp/w/sink.err &
SP=$!
for i in $(seq 100); do grep -q READY /tmp/w/sink.out && break; sleep 0.1; done
java $XO $SRCJ -cp $JAR org.rds4j.compare.Main ${ASYS:-rds4j}-source $common $OPTS "$@" --timeout 60 > /tmp/w/src.out 2>/tmp/w/src.err &
AP=$!
if [ -n "$PERF" ]; then
  sleep 3
  perf record -F 2999 -g -o /tmp/w/sink.data -p $SP -- sleep 3 2>/dev/null &
  perf record -F 2999 -g -o /tmp/w/src.data -p $AP -- sleep 3 2>/dev/null &
fi
wait $SP; wait $AP; wait
grep RESULT /tmp/w/sink.out | python3 -c "import json,sys; r=json.loads(sys.stdin.read()[7:]); print('msgs/s', r['msgs_per_s'], 'cpu', r['cpu_s'], 'agent', r.get('agent_cpu_s'))"
grep RESULT /tmp/w/src.out | python3 -c "import json,sys; r=json.loads(sys.stdin.read()[7:]); print('src cpu', r.get('cpu_s'), 'agent', r.get('agent_cpu_s'))"
