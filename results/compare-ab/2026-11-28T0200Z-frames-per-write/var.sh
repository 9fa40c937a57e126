#!/bin/bash
# var.sh OUT REPS "CASES" name=props ...: alternates JVM-property variants of rds4j-backoff (one build), one run each
OUT=$1; REPS=$2; CASES=$3; shift 3; mkdir -p $OUT
BASE="-Xms512m -Xmx512m -XX:+UseG1GC -Djava.net.preferIPv4Stack=true --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/jdk.internal.misc=ALL-UNNAMED -Dorg.slf4j.simpleLogger.defaultLogLevel=info"
for r in $(seq $REPS); do for c in $CASES; do for v in "$@"; do
  n=${v%%=*}; p=${v#*=}
  JAVA_OPTS="$BASE $p" /work/main/compare/run.sh --reps 1 --systems rds4j-backoff --cases "$c" --no-docs --out $OUT/$r-$c-$n >/dev/null 2>&1
  echo "$r $c $n $(grep -E '^\| rds4j' $OUT/$r-$c-$n/table.md | head -1 | cut -d'|' -f4,7)"
done; done; done
