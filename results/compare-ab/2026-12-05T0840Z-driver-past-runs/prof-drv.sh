#!/bin/bash
# prof-drv.sh: a 64 B pair through two drivers (pda.sh with --driver both sides), async-profiler in all four JVMs
AP=${AP:-/tmp/ap}; AT=${AT:-9}; SECS=${SECS:-4}
PDA=$(dirname "$0")/../2026-12-03T1120Z-driver-agent-append/pda.sh
DUR=${DUR:-10} WU=${WU:-6} \
  XTOOL="-XX:+DebugNonSafepoints -agentpath:$AP/lib/libasyncProfiler.so" bash "$PDA" ${SIZE:-64} &
sleep $AT
pids=$(pgrep -f org.rds4j.compare.Main)
for p in $pids; do echo "$p $(tr '\0' ' ' < /proc/$p/cmdline | grep -o 'Main [a-z0-9-]*.*--name [a-z0-9-]*' | cut -c1-80)"; done > /tmp/w/apd-pids.txt
for p in $pids; do $AP/bin/asprof -e cpu -i 200us -t -d $SECS -o collapsed -f /tmp/w/apd-$p.collapsed $p >/dev/null 2>&1 & done
wait
