#!/bin/bash
# csw.sh PID: voluntary/involuntary context switches per thread over 2 s
P=$1; declare -A v
for t in /proc/$P/task/*; do v[${t##*/}]=$(awk '/^voluntary/{a=$2}/^nonvoluntary/{b=$2}END{print a+b}' $t/status); done
sleep 2
for t in /proc/$P/task/*; do id=${t##*/}; n=$(awk '/^voluntary/{a=$2}/^nonvoluntary/{b=$2}END{print a+b}' $t/status); d=$((n-${v[$id]:-0})); [ $d -gt 20 ] && echo "$(cat $t/comm) $d"; done
