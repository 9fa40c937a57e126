#!/bin/bash
# ab.sh ROUNDS SIZE [args]: alternate the pair with /tmp/w/A.jar and /tmp/w/B.jar; prints msgs/s per round
R=${1:-4}; S=${2:-64}; shift 2
for i in $(seq $R); do
  for v in A B; do
    out=$(JAR=/tmp/w/$v.jar DUR=${DUR:-3} /tmp/w/pe.sh $S "$@" | head -1)
    echo "$v $out"
  done
done | awk '{print; m[$1]=m[$1]" "$3} END {for (k in m) print k":"m[k]}'
