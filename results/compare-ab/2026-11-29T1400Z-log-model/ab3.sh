#!/bin/bash
# ab3.sh N SIZE A B: alternated one-way pairs (pe.sh, 6 s) of two jars in /tmp/w
N=$1; SIZE=$2; A=$3; B=$4
for i in $(seq $N); do
  if [ $((i % 2)) = 1 ]; then ORDER="$A $B"; else ORDER="$B $A"; fi
  for J in $ORDER; do echo "$i $SIZE $J $(JAR=/tmp/w/$J.jar NOCPU=1 WAIT=1 bash /tmp/w/pe.sh $SIZE 6 2>/dev/null | tail -1)"; done
done
