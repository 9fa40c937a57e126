#!/bin/bash
# abquick.sh OUT ROUNDS "cases" "systems": compare/run.sh --quick, alternating /tmp/wt-before and /work/main
OUT=$1; REPS=$2; CASES=$3; SYS=$4
mkdir -p $OUT
for r in $(seq $REPS); do
 for b in before after; do
  if [ $b = before ]; then D=/tmp/wt-before; else D=/work/main; fi
  $D/compare/run.sh --quick --systems "$SYS" --cases "$CASES" --no-docs --out $OUT/$b-$r >/dev/null 2>&1
  cat $OUT/$b-$r/results.jsonl | sed "s/^/$b $r /" >> $OUT/all.txt
 done
done
