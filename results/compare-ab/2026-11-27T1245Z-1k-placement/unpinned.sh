#!/bin/bash
for i in $(seq $2); do
  /work/main/compare/run.sh --reps 1 --systems rds4j-backoff --cases $1 --no-docs --out ${OUT:-/tmp/w/pin2}/unpinned-$1-$i >/dev/null 2>&1
  echo -n "$(grep -o '"role":"sink"[^}]*' ${OUT:-/tmp/w/pin2}/unpinned-$1-$i/results.jsonl | grep -o 'msgs_per_s":[0-9]*' | cut -d: -f2 | awk '{printf "%.2fM ", $1/1e6}')"
done; echo " unpinned $1"
