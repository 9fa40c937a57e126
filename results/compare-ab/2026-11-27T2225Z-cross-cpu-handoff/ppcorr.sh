#!/bin/bash
# ppcorr.sh N OUT CASE SYSTEM: N runs, each between samples of the CPU 0 <-> CPU 1 cache-line hand-off (pp.c)
N=$1; OUT=$2; CASE=${3:-tput1k}; SYS=${4:-rds4j-backoff}; mkdir -p $OUT
for r in $(seq $N); do
  b="$(/tmp/cc/pp/pp 200000) $(/tmp/cc/pp/pp 200000) $(/tmp/cc/pp/pp 200000)"
  /work/main/compare/run.sh --reps 1 --systems $SYS --cases $CASE --no-docs --out $OUT/$r >/dev/null 2>&1
  a="$(/tmp/cc/pp/pp 200000) $(/tmp/cc/pp/pp 200000) $(/tmp/cc/pp/pp 200000)"
  echo "$r before [$b] $(grep -E '^\| (rds4j|raw)' $OUT/$r/table.md | head -1 | cut -d'|' -f4,7) after [$a]"
done
