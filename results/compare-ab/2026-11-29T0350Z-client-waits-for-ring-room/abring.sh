#!/bin/bash
# abring.sh N: alternated pairs base.jar / new.jar through drivers: 1 KiB with SO_SNDBUF 4 MiB, 64 B and 1 KiB defaults
N=$1
for i in $(seq $N); do
  if [ $((i % 2)) = 1 ]; then ORDER="base new"; else ORDER="new base"; fi
  for J in $ORDER; do echo "$i d1k-snd4m $J $(JAR=/tmp/w/$J.jar NOCPU=1 bash /tmp/w/pd.sh 1024 6 --sndbuf 4m 2>/dev/null | tail -1)"; done
  for J in $ORDER; do echo "$i d64 $J $(JAR=/tmp/w/$J.jar NOCPU=1 bash /tmp/w/pd.sh 64 6 2>/dev/null | tail -1)"; done
  for J in $ORDER; do echo "$i d1k $J $(JAR=/tmp/w/$J.jar NOCPU=1 bash /tmp/w/pd.sh 1024 6 2>/dev/null | tail -1)"; done
done
