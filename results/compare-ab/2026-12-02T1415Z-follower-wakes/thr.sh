#!/bin/bash
# thr.sh PID...: per-thread CPU % over 2 s
for P in "$@"; do
  declare -A a
  for t in /proc/$P/task/*; do id=${t##*/}; s=($(cut -d')' -f2 $t/stat)); a[$id]=$(( ${s[11]} + ${s[12]} )); done
  sleep 2
  for t in /proc/$P/task/*; do id=${t##*/}; s=($(cut -d')' -f2 $t/stat)); n=$(cat $t/comm); d=$(( ${s[11]} + ${s[12]} - ${a[$id]:-0} )); [ $d -gt 2 ] && echo "$P $n $((d/2))%"; done
  unset a
done
