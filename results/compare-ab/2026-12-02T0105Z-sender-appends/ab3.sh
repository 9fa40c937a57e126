#!/bin/bash
# ab3.sh ROUNDS SIZE [args]: alternate main (A.jar) and the prototype (B.jar, -Dx.append=true); msgs/s and seq errors
R=$1; S=$2; shift 2
for i in $(seq $R); do
  for v in A B; do
    out=$(JAR=/tmp/w/$v.jar XOPTS="-Dx.append=true $XO2" DUR=${DUR:-3} /tmp/w/pe.sh $S "$@" | head -1)
    echo "$v $out"
  done
done | awk '{print; m[$1]=m[$1]" "$3} END {for (k in m) print k":"m[k]}'
