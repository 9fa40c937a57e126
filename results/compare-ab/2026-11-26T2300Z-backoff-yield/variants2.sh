#!/bin/bash
# usage: variants2.sh OUT REPS "case list" "optsA|optsB|..."  (full-length cases, not --quick)
cd /work/main
OUT=$1; REPS=$2; CASES=$3; IFS='|' read -ra VARS <<< "$4"
BASE="-Xms512m -Xmx512m -XX:+UseG1GC -Djava.net.preferIPv4Stack=true --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/jdk.internal.misc=ALL-UNNAMED -Dorg.slf4j.simpleLogger.defaultLogLevel=info"
for r in $(seq $REPS); do
 i=0
 for v in "${VARS[@]}"; do
  i=$((i+1))
  JAVA_OPTS="$BASE $v" compare/run.sh --reps 1 --systems "rds4j-backoff" --cases "$CASES" --no-docs --out $OUT/$i-$r >/dev/null 2>&1
  echo "== [$v] rep $r"; grep "default idle" $OUT/$i-$r/table.md | grep -v "| 0\.[0-9]* |.*n/a |$" | cut -c1-120
 done
done
