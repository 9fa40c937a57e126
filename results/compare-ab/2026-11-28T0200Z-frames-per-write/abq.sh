#!/bin/bash
# abq.sh OUT REPS "CASES" "SYSTEMS": alternates /tmp/wt-before and /work/main, one run each; prints the first row
OUT=$1; REPS=$2; CASES=$3; SYSS=$4; mkdir -p $OUT
for r in $(seq $REPS); do for c in $CASES; do for s in $SYSS; do for b in before after; do
  D=/work/main; [ $b = before ] && D=/tmp/wt-before
  $D/compare/run.sh --reps 1 --systems "$s" --cases "$c" --no-docs --out $OUT/$b-$r-$c-$s >/dev/null 2>&1
  echo "$r $c $s $b $(grep -E '^\| (rds4j|raw)' $OUT/$b-$r-$c-$s/table.md | head -1 | cut -d'|' -f4,7)"
done; done; done; done
