#!/bin/bash
# alternates default vs tcp send ring 0 for CASE, REPS times
CASE=$1; REPS=$2; OUT=$3; mkdir -p $OUT
BASE="-Xms512m -Xmx512m -XX:+UseG1GC -Djava.net.preferIPv4Stack=true --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/jdk.internal.misc=ALL-UNNAMED -Dorg.slf4j.simpleLogger.defaultLogLevel=info"
for r in $(seq $REPS); do
 for v in ring copy; do
  X=""; [ $v = copy ] && X="-Drds4j.tcp.send.ring=0"
  JAVA_OPTS="$BASE $X" /work/main/compare/run.sh --reps 1 --systems rds4j-backoff --cases $CASE --no-docs --out $OUT/$v-$r >/dev/null 2>&1
  echo "$v $r $(grep -E '^\| rds4j' $OUT/$v-$r/table.md | head -1 | cut -d'|' -f4,7)"
 done
done
