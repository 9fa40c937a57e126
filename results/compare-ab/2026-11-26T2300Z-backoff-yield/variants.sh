#!/bin/bash
# usage: variants.sh OUT REPS "case list" "spins:yields ..."
cd /work/main
OUT=$1; REPS=$2; CASES=$3; VARS=$4
BASE="-Xms512m -Xmx512m -XX:+UseG1GC -Djava.net.preferIPv4Stack=true --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/jdk.internal.misc=ALL-UNNAMED -Dorg.slf4j.simpleLogger.defaultLogLevel=info"
for r in $(seq $REPS); do
 for v in $VARS; do
  s=${v%:*}; y=${v#*:}
  JAVA_OPTS="$BASE -Dx.spins=$s -Dx.yields=$y" compare/run.sh --quick --systems "rds4j-backoff" --cases "$CASES" --no-docs --out $OUT/$v-$r >/dev/null 2>&1
  echo "== $v rep $r"; grep "default idle" $OUT/$v-$r/table.md | cut -c1-160
 done
done
