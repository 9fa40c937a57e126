#!/bin/bash
# jab.sh N A B [jmh args]: alternated single-fork JMH runs of SocketPathBenchmark tcp/64/invoker from /tmp/w/jmh-A.jar and jmh-B.jar
N=$1; A=$2; B=$3; shift 3
for i in $(seq $N); do
  if [ $((i % 2)) = 1 ]; then ORDER="$A $B"; else ORDER="$B $A"; fi
  for J in $ORDER; do
    r=$(java -jar /tmp/w/jmh-$J.jar SocketPathBenchmark -p path=tcp -p size=${SIZE:-64} -p threading=invoker -f 1 -wi 3 -i 5 -r 2 -w 2 "$@" 2>&1 | grep "^SocketPathBenchmark" | awk '{print $(NF-3)}')
    echo "$i $J $r"
  done
done
