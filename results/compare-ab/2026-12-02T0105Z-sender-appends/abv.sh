#!/bin/bash
# abv.sh ROUNDS SIZE: main (A.jar), the prototype (V3.jar, -Dx.append=true), the branch (C.jar) alternated
R=$1; S=$2; shift 2
for i in $(seq $R); do
  for v in A V3 C; do
    case $v in A) X="";; V3) X="-Dx.append=true";; C) X="$CX";; esac
    out=$(JAR=/tmp/w/$v.jar XOPTS="$X" DUR=${DUR:-3} /tmp/w/pe.sh $S "$@" | head -1)
    echo "$v $out"
  done
done | awk '{print; m[$1]=m[$1]" "$3} END {for (k in m) print k":"m[k]}'
