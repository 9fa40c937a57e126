#!/bin/bash
# pin3.sh LAYOUT OUT: one tput1k run; 3 s in, pins the source's agent (A), the source's application thread (P) and the
# sink's threads (K): LAYOUT "A P K" gives each one's CPU, e.g. "0 0 1"
L=($1); OUT=$2; mkdir -p $OUT
/work/main/compare/run.sh --reps 1 --systems rds4j-backoff --cases tput1k --no-docs --out $OUT >/dev/null 2>&1 &
sleep 3
S=$(pgrep -f "compare.Main rds4j-source" | while read p; do [ "$(cat /proc/$p/comm)" = java ] && echo $p; done)
K=$(pgrep -f "compare.Main rds4j-sink" | while read p; do [ "$(cat /proc/$p/comm)" = java ] && echo $p; done)
for t in /proc/$S/task/*; do case "$(cat $t/comm)" in rds4j-agent-sou) taskset -p -c ${L[0]} $(basename $t) >/dev/null;; rds4j-source) taskset -p -c ${L[1]} $(basename $t) >/dev/null;; esac; done
for t in /proc/$K/task/*; do case "$(cat $t/comm)" in rds4j-sink|rds4j-agent-sin) taskset -p -c ${L[2]} $(basename $t) >/dev/null;; esac; done
wait
echo "$1: $(grep -o '"role":"sink"[^}]*' $OUT/results.jsonl | grep -o 'msgs_per_s":[0-9]*' | cut -d: -f2 | awk '{printf "%.2fM ", $1/1e6}')"
