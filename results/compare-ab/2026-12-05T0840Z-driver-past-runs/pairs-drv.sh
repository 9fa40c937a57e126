#!/bin/bash
# pairs-drv.sh N SIZE: N alternated pairs through two drivers (pda.sh), A=/tmp/w/head3.jar (before), B=/tmp/w/past.jar; order reversed every other pair
# The receiving side alone through a driver: ASYS=wire SRCX="" pairs-drv.sh N SIZE (compare's wire source, the ideal sender, into rds4j's sink through its driver).
PDA=$(dirname "$0")/../2026-12-03T1120Z-driver-agent-append/pda.sh
for i in $(seq $1); do
  if [ $((i % 2)) = 1 ]; then order="A B"; else order="B A"; fi
  for w in $order; do
    if [ $w = A ]; then jar=/tmp/w/head3.jar; else jar=/tmp/w/past.jar; fi
    r=$(JAR=$jar WU=${WU:-6} DUR=${DUR:-5} bash $PDA ${2:-64} 2>/dev/null | grep msgs/s | awk '{print $2}')
    echo "$i $w $r"
  done
done
