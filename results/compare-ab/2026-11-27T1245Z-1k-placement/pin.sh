#!/bin/bash
# pin.sh MODE N: tput1k runs, with threads pinned 3 s in. MODE apart: source agent cpu0, sink threads cpu1; same: both cpu0
MODE=$1; OUT=${OUT:-/tmp/w/pin2}; mkdir -p $OUT
for i in $(seq $2); do
  /work/main/compare/run.sh --reps 1 --systems rds4j-backoff --cases ${CASE:-tput1k} --no-docs --out $OUT/$MODE-${CASE:-tput1k}-$i >/dev/null 2>&1 &
  sleep 3
  S=$(pgrep -f "compare.Main rds4j-source" | while read p; do [ "$(cat /proc/$p/comm)" = java ] && echo $p; done)
  K=$(pgrep -f "compare.Main rds4j-sink" | while read p; do [ "$(cat /proc/$p/comm)" = java ] && echo $p; done)
  for t in /proc/$S/task/*; do [ "$(cat $t/comm)" = rds4j-agent-sou ] && taskset -p -c 0 $(basename $t) >/dev/null; done
  if [ $MODE = apart ]; then C=1; else C=0; fi
  for t in /proc/$K/task/*; do case "$(cat $t/comm)" in rds4j-sink|rds4j-agent-sin) taskset -p -c $C $(basename $t) >/dev/null;; esac; done
  wait
  echo -n "$(grep -o '"role":"sink"[^}]*' $OUT/$MODE-${CASE:-tput1k}-$i/results.jsonl | grep -o 'msgs_per_s":[0-9]*' | cut -d: -f2 | awk '{printf "%.2fM ", $1/1e6}')"
done; echo " $MODE"
