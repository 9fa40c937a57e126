#!/bin/bash
# abd.sh SIZE N SECS JAR_A JAR_B: alternated driver one-way pairs (order reversed every other pair), prints rate per run
SIZE=$1; N=$2; SECS=$3; A=$4; B=$5
for i in $(seq $N); do
  if [ $((i % 2)) = 1 ]; then ORDER="$A $B"; else ORDER="$B $A"; fi
  for J in $ORDER; do
    r=$(JAR=$J NOCPU=1 bash /tmp/w/pd.sh $SIZE $SECS 2>/dev/null | grep -o '[0-9]*$')
    echo "$i $(basename $J) $r"
  done
done
