#!/bin/bash
# sides2.sh N A.jar B.jar: N alternated rounds (order reversed each round), 64 B, embedded defaults: the receiving side
# alone (wire->rds4j), the pair, and both again as a fan-out to 16 sockets of the receiving stack (--receivers 16)
N=$1; A=$2; B=$3
PDA=/work/main/results/compare-ab/2026-12-03T1120Z-driver-agent-append/pda.sh
for r in $(seq $N); do
  if [ $((r % 2)) = 1 ]; then order="A B"; else order="B A"; fi
  for w in $order; do
    if [ $w = A ]; then J=$A; else J=$B; fi
    echo "$r $w wire->rds4j: $(JAR=$J PSYS=rds4j ASYS=wire SINKX= SRCX= DUR=5 bash $PDA 64 2>&1 | tr '\n' ' ')"
    echo "$r $w rds4j->rds4j: $(JAR=$J SINKX= SRCX= DUR=5 bash $PDA 64 2>&1 | tr '\n' ' ')"
    echo "$r $w fanout-wire->rds4j: $(JAR=$J PSYS=rds4j ASYS=wire SINKX='--receivers 16' SRCX='--receivers 16' DUR=5 bash $PDA 64 2>&1 | tr '\n' ' ')"
    echo "$r $w fanout-rds4j->rds4j: $(JAR=$J SINKX='--receivers 16' SRCX='--receivers 16' DUR=5 bash $PDA 64 2>&1 | tr '\n' ' ')"
  done
done
