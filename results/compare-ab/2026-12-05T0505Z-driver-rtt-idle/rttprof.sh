#!/bin/bash
# rttprof.sh: 64 B ping-pong through drivers, async-profiler (cpu, 200us, per thread) on every JVM for 4 s
export JAVA_TOOL_OPTIONS="-XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints -agentpath:/tmp/ap/lib/libasyncProfiler.so"
AT=12 $(dirname "$0")/rttctx.sh > /tmp/w/rttprof.ctx 2>&1 &
sleep 9
for p in $(pgrep java); do /tmp/ap/bin/asprof -e cpu -i 200us -t -d 4 -o collapsed -f /tmp/w/rtp-$p.collapsed $p >/dev/null 2>&1 & done
wait
cat /tmp/w/rttprof.ctx
