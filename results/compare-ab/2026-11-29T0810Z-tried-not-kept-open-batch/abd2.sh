#!/bin/bash
# abd2.sh N: alternated pairs head.jar / batch.jar through drivers (pd.sh, 8 s): 1 KiB and 64 B one-way, default configuration
N=$1
for i in $(seq $N); do
  if [ $((i % 2)) = 1 ]; then ORDER="head batch"; else ORDER="batch head"; fi
  for J in $ORDER; do echo "$i d1k $J $(JAR=/tmp/w/$J.jar NOCPU=1 bash /tmp/w/pd.sh 1024 8 2>/dev/null | tail -1)"; done
  for J in $ORDER; do echo "$i d64 $J $(JAR=/tmp/w/$J.jar NOCPU=1 bash /tmp/w/pd.sh 64 8 2>/dev/null | tail -1)"; done
done
