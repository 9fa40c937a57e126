#!/bin/bash
# jab.sh ROUNDS [jmh params]: SocketPathBenchmark from jmh-A.jar and jmh-B.jar alternated; ops/s per param set
R=${1:-3}; shift
for i in $(seq $R); do for v in A B; do
  java -jar /tmp/w/jmh-$v.jar SocketPathBenchmark -f 1 -wi 3 -i 5 -r 1 -w 1 "$@" -rf csv -rff /tmp/w/jab-$v-$i.csv >/dev/null 2>&1
  tail -n +2 /tmp/w/jab-$v-$i.csv | tr -d '"' | awk -F, -v v=$v '{printf "%s %s/%s/%s %.2fM\n", v, $8, $9, $10, $5/1e6}'
done; done
