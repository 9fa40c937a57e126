#!/bin/bash
# pinD.sh ROOT OUT CASE: one run of rds4j-driver from worktree ROOT; 3 s in, the source and its driver go on CPU 0, the
# sink and its driver on CPU 1 (each side a CPU of its own, as the 1 KiB placement study found best)
ROOT=$1; OUT=$2; CASE=$3; mkdir -p $OUT
$ROOT/compare/run.sh --reps 1 --systems rds4j-driver --cases $CASE --no-docs --out $OUT >/dev/null 2>&1 &
sleep 3.5
for role in source sink; do
  c=0; [ $role = sink ] && c=1
  P=$(pgrep -f "compare.Main rds4j-$role" | while read p; do [ "$(cat /proc/$p/comm)" = java ] && echo $p; done)
  for p in $P $(pgrep -P $P java); do taskset -a -p -c $c $p >/dev/null; done
done
wait
grep -o '"role":"sink"[^}]*' $OUT/results.jsonl | grep -o 'msgs_per_s":[0-9]*' | cut -d: -f2 | awk '{printf "%.2fM\n", $1/1e6}'
