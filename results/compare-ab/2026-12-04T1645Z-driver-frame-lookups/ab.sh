#!/bin/bash
# ab.sh SIZE N: N alternated pairs of A.jar / B.jar through drivers (pda.sh), order swapped every pair
SIZE=$1; N=$2
for i in $(seq $N); do
  if [ $((i % 2)) = 1 ]; then order="A B"; else order="B A"; fi
  for v in $order; do
    r=$(JAR=/tmp/w/$v.jar WU=10 bash /work/main/results/compare-ab/2026-12-03T1120Z-driver-agent-append/pda.sh $SIZE 2>&1 | tr '\n' ' ')
    echo "$i $v $r"
  done
done
