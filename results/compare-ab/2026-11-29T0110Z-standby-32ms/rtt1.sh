#!/bin/bash
# rtt1.sh: one rtt pair like run.sh's (defaults), JAR and XJ (extra JVM options) from the environment; prints percentiles
JAR=${JAR:-/work/main/compare/target/compare.jar}
J="-Xms512m -Xmx512m -XX:+UseG1GC -Djava.net.preferIPv4Stack=true --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/jdk.internal.misc=ALL-UNNAMED $XJ"
C="--port 21000 --tcp-port 21030 --warmup 4 --duration ${DUR:-5} --grace 1 --start-timeout 40 --size 64 --warmup-rt 20000 --rt 200000 --io block --agent-idle backoff --idle yield $*"
java $J -cp $JAR org.rds4j.compare.Main rds4j-rtt-server $C --timeout 200 > /tmp/w/p.out 2>/tmp/w/p.err &
P=$!
for i in $(seq 100); do grep -q READY /tmp/w/p.out 2>/dev/null && break; sleep 0.1; done
java $J -cp $JAR org.rds4j.compare.Main rds4j-rtt-client $C --timeout 200 > /tmp/w/a.out 2>/tmp/w/a.err
kill $P 2>/dev/null; wait $P 2>/dev/null
grep -o '"p50_us":[0-9.]*,"p90_us":[0-9.]*,"p99_us":[0-9.]*,"p999_us":[0-9.]*' /tmp/w/a.out
