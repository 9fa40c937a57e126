#!/bin/bash
# qk.sh OUT REPS: alternates --quick runs of /tmp/wt-before and /work/main, default config and driver
OUT=$1; mkdir -p $OUT
for r in $(seq $2); do for b in before after; do
  D=/work/main; [ $b = before ] && D=/tmp/wt-before
  $D/compare/run.sh --quick --systems "rds4j-backoff rds4j-driver" --cases "${CASES:-rtt tput64 tput1k fanout}" --no-docs --out $OUT/$b-$r >/dev/null 2>&1
  echo "== $r $b"; grep -E '^\| rds4j' $OUT/$b-$r/table.md | grep -v "×.*×.*×" | cut -d'|' -f2,4 
done; done
