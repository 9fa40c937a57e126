#!/bin/bash
# thp.sh ROUNDS SIZE: alternate shmem THP never / force (both sides), pair in default config
R=$1; S=$2; shift 2
for i in $(seq $R); do
  for v in never force; do
    echo $v > /sys/kernel/mm/transparent_hugepage/shmem_enabled
    out=$(DUR=${DUR:-3} /tmp/w/pe.sh $S "$@" | head -1)
    echo "$v $out"
  done
done | awk '{print; m[$1]=m[$1]" "$3} END {for (k in m) print k":"m[k]}'
echo never > /sys/kernel/mm/transparent_hugepage/shmem_enabled
