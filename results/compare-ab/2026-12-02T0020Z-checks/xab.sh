#!/bin/bash
# xab.sh ROUNDS SIZE "XOPTS_A" "XOPTS_B" [args]: alternate JVM options on both sides
R=$1; S=$2; XA="$3"; XB="$4"; shift 4
for i in $(seq $R); do
  for v in A B; do
    if [ $v = A ]; then X="$XA"; else X="$XB"; fi
    out=$(XOPTS="$X" DUR=${DUR:-3} /tmp/w/pe.sh $S "$@" | head -1)
    echo "$v $out"
  done
done | awk '{print; m[$1]=m[$1]" "$3} END {for (k in m) print k":"m[k]}'
