#!/bin/bash
# abc.sh ROUNDS SIZE: main, the prototype, the prototype without the ack budget, alternated
R=$1; S=$2; shift 2
for i in $(seq $R); do
  for v in A B C; do
    case $v in A) J=A; X="";; B) J=B; X="-Dx.append=true";; C) J=B; X="-Dx.append=true -Dx.nobudget=true";; esac
    out=$(JAR=/tmp/w/$J.jar XOPTS="$X" DUR=${DUR:-3} /tmp/w/pe.sh $S "$@" | head -1)
    echo "$v $out"
  done
done | awk '{print; m[$1]=m[$1]" "$3} END {for (k in m) print k":"m[k]}'
