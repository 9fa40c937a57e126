#!/bin/bash
SIZE=${1:-64}
XTOOL=-XX:+DebugNonSafepoints WU=10 DUR=6 JAR=${JAR:-/tmp/w/B.jar} bash /work/main/results/compare-ab/2026-12-03T1120Z-driver-agent-append/pda.sh $SIZE > /tmp/w/pair.out 2>&1 &
sleep 13
for j in $(pgrep -f 'org.rds4j.compare.Main rds4j-'); do
  a=$(tr '\0' ' ' < /proc/$j/cmdline)
  role=$(echo "$a" | grep -o 'Main rds4j-[a-z]*' | cut -c6-)
  case "$a" in *--name*) role=$(echo "$a" | sed 's/.*--name \([^ ]*\).*/\1/');; esac
  /tmp/ap/bin/asprof -e cpu -i 100us -t -d 4 -o collapsed -f /tmp/w/ap-$role.collapsed $j > /dev/null 2>&1 &
done
wait
cat /tmp/w/pair.out
