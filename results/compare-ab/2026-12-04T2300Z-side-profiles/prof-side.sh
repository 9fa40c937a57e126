#!/bin/bash
# prof-side.sh SINKSYS SOURCESYS: one compare pair (pda.sh, embedded defaults) with async-profiler loaded at each JVM's
# start (attached later, it set off C2 recompilations that took 30 % of a core in the window) and
# -XX:+DebugNonSafepoints (without it, inlined frames are misattributed), profiled by asprof from AT s for SECS s.
# Out: /tmp/w/aps-<pid>.collapsed and /tmp/w/aps-pids.txt. E.g. rds4j's sending side alone: prof-side.sh wire rds4j;
# a pair through two drivers (its drivers' JVMs profiled too): SINKX=--driver SRCX=--driver WU=6 AT=9 prof-side.sh rds4j rds4j
AP=${AP:-/tmp/ap}; AT=${AT:-7}; SECS=${SECS:-4}
PDA=$(dirname "$0")/../2026-12-03T1120Z-driver-agent-append/pda.sh
PSYS=$1 ASYS=$2 SINKX=${SINKX-} SRCX=${SRCX-} DUR=${DUR:-10} \
  XTOOL="-XX:+DebugNonSafepoints -agentpath:$AP/lib/libasyncProfiler.so" bash "$PDA" ${SIZE:-64} &
sleep $AT
pids=$(pgrep -f org.rds4j.compare.Main)
for p in $pids; do echo "$p $(tr '\0' ' ' < /proc/$p/cmdline | grep -o 'Main [a-z0-9-]*')"; done > /tmp/w/aps-pids.txt
for p in $pids; do $AP/bin/asprof -e cpu -i 200us -t -d $SECS -o collapsed -f /tmp/w/aps-$p.collapsed $p >/dev/null 2>&1 & done
wait
