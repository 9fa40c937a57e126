#!/bin/bash
# jfrsrc.sh: rds4j source -> wire sink, JFR on source with 1 ms sampling; prints top frames by method:line
JAR=${JAR:-/tmp/w/M.jar}
OPTS="--io block --agent-idle backoff --idle yield"
P=$((21000 + RANDOM % 1000))
common="--port $P --tcp-port $((P+30)) --warmup 3 --duration ${DUR:-6} --grace 1 --start-timeout 40 --size ${SIZE:-64}"
cat > /tmp/w/prof.jfc <<JFC
<?xml version="1.0" encoding="UTF-8"?>
<configuration version="2.0"><event name="jdk.ExecutionSample"><setting name="enabled">true</setting><setting name="period">1 ms</setting></event>
<event name="jdk.NativeMethodSample"><setting name="enabled">true</setting><setting name="period">1 ms</setting></event></configuration>
JFC
java -cp $JAR org.rds4j.compare.Main ${PSYS:-wire}-sink $common $OPTS --timeout 60 > /tmp/w/sink.out 2>/tmp/w/sink.err &
SP=$!
for i in $(seq 100); do grep -q READY /tmp/w/sink.out && break; sleep 0.1; done
java -XX:StartFlightRecording=filename=/tmp/w/src.jfr,settings=/tmp/w/prof.jfc,delay=4s,duration=4s -cp $JAR org.rds4j.compare.Main rds4j-source $common $OPTS --timeout 60 > /tmp/w/src.out 2>/tmp/w/src.err &
wait
grep RESULT /tmp/w/sink.out | python3 -c "import json,sys; r=json.loads(sys.stdin.read()[7:]); print('msgs/s', r['msgs_per_s'], 'seqerr', r.get('seq_errors'))" 2>/dev/null
