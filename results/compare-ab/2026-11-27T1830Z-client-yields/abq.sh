#!/bin/bash
# abq.sh OUT REPS CASE SYSTEM: alternates /tmp/wt-before and /work/main, one run each; prints the rds4j row
OUT=$1; REPS=$2; CASE=$3; SYS=$4; mkdir -p $OUT
for r in $(seq $REPS); do for b in before after; do
  D=/work/main; [ $b = before ] && D=/tmp/wt-before
  $D/compare/run.sh --reps 1 --systems "$SYS" --cases "$CASE" --no-docs --out $OUT/$b-$r >/dev/null 2>&1
  echo "$b $r $(grep -E '^\| rds4j' $OUT/$b-$r/table.md | head -1 | cut -d'|' -f4-8)"
done; done
