#!/bin/bash
# vard.sh OUT REPS "CASES" name=props ...: alternates JVM-property variants of rds4j-driver (one build), one run each;
# the properties reach the child driver JVMs too, through JAVA_TOOL_OPTIONS
OUT=$1; REPS=$2; CASES=$3; shift 3; mkdir -p $OUT
for r in $(seq $REPS); do for c in $CASES; do for v in "$@"; do
  n=${v%%=*}; p=${v#*=}
  JAVA_TOOL_OPTIONS="$p" /work/main/compare/run.sh --reps 1 --systems rds4j-driver --cases "$c" --no-docs --out $OUT/$r-$c-$n >/dev/null 2>&1
  echo "$r $c $n $(grep -E '^\| rds4j' $OUT/$r-$c-$n/table.md | head -1 | cut -d'|' -f4,7)"
done; done; done
