#!/bin/bash
# gc.sh CASE SYSTEM PAIRS OUT: the suite's JVM options with G1 (as the suite) and with ParallelGC, alternated
CASE=$1; SYS=$2; PAIRS=$3; OUT=$4; mkdir -p $OUT
COMMON="-Xms512m -Xmx512m -Djava.net.preferIPv4Stack=true --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/jdk.internal.misc=ALL-UNNAMED -Dorg.slf4j.simpleLogger.defaultLogLevel=info"
for r in $(seq $PAIRS); do for gc in G1 Parallel; do
  JAVA_OPTS="-XX:+Use${gc}GC $COMMON" /work/main/compare/run.sh --reps 1 --systems $SYS --cases $CASE --no-docs --out $OUT/$gc-$r >/dev/null 2>&1
  echo "$gc $r $(grep -E '^\| (rds4j|raw)' $OUT/$gc-$r/table.md | head -1 | cut -d'|' -f4,7)"
done; done
