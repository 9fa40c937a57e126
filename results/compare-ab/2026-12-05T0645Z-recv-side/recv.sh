#!/bin/bash
# recv.sh N A.jar B.jar [SIZE] [SINKX]: N alternated rounds (order reversed each round) of the receiving side alone
# (compare's wire source -> rds4j's sink, embedded defaults; pda.sh of ../2026-12-03T1120Z-driver-agent-append/)
N=$1; A=$2; B=$3; S=${4:-64}; X=${5:-}
PDA=$(cd "$(dirname "$0")/../2026-12-03T1120Z-driver-agent-append" && pwd)/pda.sh
for r in $(seq $N); do
  if [ $((r % 2)) = 1 ]; then order="A B"; else order="B A"; fi
  for w in $order; do
    if [ $w = A ]; then J=$A; else J=$B; fi
    echo "$r $w wire->rds4j: $(JAR=$J PSYS=rds4j ASYS=wire SINKX="$X" SRCX="$X" DUR=5 bash $PDA $S 2>&1 | tr '\n' ' ')"
  done
done
