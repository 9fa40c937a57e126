#!/bin/bash
# usage: rtt.sh RT [extra JVM opts]   -- one rds4j-backoff rtt pair, prints the RESULT
cd /work/main
RT=$1; shift
J="-Xms512m -Xmx512m -XX:+UseG1GC -Djava.net.preferIPv4Stack=true -Dorg.slf4j.simpleLogger.defaultLogLevel=info $*"
C="--port 21000 --tcp-port 21030 --warmup 2 --duration 5 --grace 1 --start-timeout 40 --size 64 --warmup-rt 20000 --rt $RT --io block --agent-idle backoff --idle yield"
java $J -cp compare/target/compare.jar org.rds4j.compare.Main rds4j-rtt-server $C --timeout 200 > /tmp/w/p.out 2>/tmp/w/p.err &
P=$!
for i in $(seq 100); do grep -q READY /tmp/w/p.out 2>/dev/null && break; sleep 0.1; done
java $J -cp compare/target/compare.jar org.rds4j.compare.Main rds4j-rtt-client $C --timeout 200 > /tmp/w/a.out 2>/tmp/w/a.err
kill $P; wait $P 2>/dev/null
grep RESULT /tmp/w/a.out | sed 's/.*"p50_us":\([0-9.]*\),"p90_us":\([0-9.]*\),"p99_us":\([0-9.]*\).*/p50 \1 p90 \2 p99 \3/'
