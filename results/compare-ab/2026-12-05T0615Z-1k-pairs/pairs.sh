#!/bin/bash
# pairs.sh N A.jar B.jar SIZE: N alternated rounds of the embedded rds4j pair, order reversed each round
N=$1; A=$2; B=$3; S=${4:-64}
PDA=/work/main/results/compare-ab/2026-12-03T1120Z-driver-agent-append/pda.sh
for r in $(seq $N); do
  if [ $((r % 2)) = 1 ]; then order="A B"; else order="B A"; fi
  for w in $order; do
    if [ $w = A ]; then J=$A; else J=$B; fi
    out=$(JAR=$J SINKX= SRCX= DUR=5 bash $PDA $S 2>&1 | tr '\n' ' ')
    echo "$r $w rds4j->rds4j: $out"
  done
done
