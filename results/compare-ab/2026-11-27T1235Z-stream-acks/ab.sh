#!/bin/bash
# usage: ab.sh OUT REPS "cases" "systems" -- alternates the build before (/tmp/wt-before) and after (/work/main)
OUT=$1; REPS=$2; CASES=$3; SYS=$4
mkdir -p $OUT
for r in $(seq $REPS); do
 for b in before after; do
  if [ $b = before ]; then D=/tmp/wt-before; else D=/work/main; fi
  $D/compare/run.sh --reps 1 --systems "$SYS" --cases "$CASES" --no-docs --out $OUT/$b-$r >/dev/null 2>&1
  cat $OUT/$b-$r/results.jsonl | sed "s/^/$b $r /" >> $OUT/all.txt
  echo "== $b rep $r"; grep -E "^\| (rds4j|raw)" $OUT/$b-$r/table.md | grep -v "| 0\.[0-9]* |.*|$" | cut -c1-130
 done
done
