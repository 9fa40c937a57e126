#!/bin/bash
# allthr.sh: per-thread CPU of every compare JVM over 2 s, sampled at once
pids=$(pgrep -f "org.rds4j.compare.Main")
for p in $pids; do ( out=$(bash /tmp/w/threads2.sh $p 2); echo "== $p $(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | grep -o 'Main [a-z0-9-]*')"; echo "$out" ) > /tmp/w/s55/thr.$p & done; wait
for p in $pids; do cat /tmp/w/s55/thr.$p; done
