#!/bin/bash
# ab4.sh ROUNDS SIZE [args]: main (A.jar) against the branch (B.jar), alternated; msgs/s and sequence errors
R=$1; S=$2; shift 2
for i in $(seq $R); do
  for v in A B; do
    out=$(JAR=/tmp/w/$v.jar DUR=${DUR:-3} /tmp/w/pe.sh $S "$@" | head -1)
    echo "$v $out"
  done
done | awk '{print; m[$1]=m[$1]" "$3} END {for (k in m) print k":"m[k]}'
