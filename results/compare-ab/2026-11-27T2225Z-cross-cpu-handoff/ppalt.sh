#!/bin/bash
# ppalt.sh N OUT CASE: N rounds of (nio, rds4j-backoff), each run between samples of the CPU 0 <-> 1 hand-off
N=$1; OUT=$2; CASE=${3:-tput1k}; mkdir -p $OUT
for r in $(seq $N); do for SYS in nio rds4j-backoff; do
  b="$(/tmp/cc/pp/pp 200000) $(/tmp/cc/pp/pp 200000) $(/tmp/cc/pp/pp 200000)"
  /work/main/compare/run.sh --reps 1 --systems $SYS --cases $CASE --no-docs --out $OUT/$r-$SYS >/dev/null 2>&1
  a="$(/tmp/cc/pp/pp 200000) $(/tmp/cc/pp/pp 200000) $(/tmp/cc/pp/pp 200000)"
  echo "$r $SYS before [$b] $(grep -E '^\| (rds4j|raw)' $OUT/$r-$SYS/table.md | head -1 | cut -d'|' -f4,7) after [$a]"
done; done
