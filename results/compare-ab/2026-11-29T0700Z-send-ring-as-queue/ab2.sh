#!/bin/bash
# ab2.sh N: alternated pairs base.jar / new.jar: embedded 64 B and 1 KiB one-way (pe.sh, 6 s windows)
N=$1
for i in $(seq $N); do
  if [ $((i % 2)) = 1 ]; then ORDER="base new"; else ORDER="new base"; fi
  for J in $ORDER; do echo "$i t64 $J $(JAR=/tmp/w/$J.jar NOCPU=1 bash /tmp/w/pe.sh 64 6 2>/dev/null | tail -1)"; done
  for J in $ORDER; do echo "$i t1k $J $(JAR=/tmp/w/$J.jar NOCPU=1 bash /tmp/w/pe.sh 1024 6 2>/dev/null | tail -1)"; done
done
