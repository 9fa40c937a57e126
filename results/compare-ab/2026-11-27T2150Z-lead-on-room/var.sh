#!/bin/bash
# var.sh CASE SYSTEM PAIRS OUT "NAME=PROPS" ...: alternates JVM property variants (each applied to every process)
CASE=$1; SYS=$2; PAIRS=$3; OUT=$4; shift 4; mkdir -p $OUT
BASE="-Xms512m -Xmx512m -XX:+UseG1GC -Djava.net.preferIPv4Stack=true --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/jdk.internal.misc=ALL-UNNAMED -Dorg.slf4j.simpleLogger.defaultLogLevel=info"
for r in $(seq $PAIRS); do for v in "$@"; do
  n=${v%%=*}; p=${v#*=}
  JAVA_OPTS="$BASE $p" /work/main/compare/run.sh --reps 1 --systems $SYS --cases $CASE --no-docs --out $OUT/$n-$r >/dev/null 2>&1
  echo "$n $r $(grep -E '^\| rds4j' $OUT/$n-$r/table.md | head -1 | cut -d'|' -f4,7)"
done; done
