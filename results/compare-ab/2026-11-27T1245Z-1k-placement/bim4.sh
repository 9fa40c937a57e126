#!/bin/bash
# bim4.sh N: tput1k rds4j-backoff runs; syscall counts of source and sink over 2 s mid-run
EV=syscalls:sys_enter_sendfile64,syscalls:sys_enter_read,syscalls:sys_enter_write,syscalls:sys_enter_writev,syscalls:sys_enter_futex,syscalls:sys_enter_sched_yield,syscalls:sys_enter_epoll_wait,context-switches
for i in $(seq $1); do
  /work/main/compare/run.sh --reps 1 --systems rds4j-backoff --cases tput1k --no-docs --out /tmp/w/bim7/r$i >/dev/null 2>&1 &
  sleep 6
  S=$(pgrep -f "compare.Main rds4j-source" | while read p; do [ "$(cat /proc/$p/comm)" = java ] && echo $p; done)
  K=$(pgrep -f "compare.Main rds4j-sink" | while read p; do [ "$(cat /proc/$p/comm)" = java ] && echo $p; done)
  perf stat -x, -e $EV -p $S -o /tmp/w/bim7/s$i.txt -- sleep 2 &
  perf stat -x, -e $EV -p $K -o /tmp/w/bim7/k$i.txt -- sleep 2
  wait
  echo "run $i: $(grep -o '"role":"sink"[^}]*' /tmp/w/bim7/r$i/results.jsonl | grep -o 'msgs_per_s":[0-9]*' | cut -d: -f2)"
  for f in s k; do echo -n "  $f: "; grep -v "^#" /tmp/w/bim7/$f$i.txt | grep -v "^$" | awk -F, '{n=$3; sub("syscalls:sys_enter_","",n); printf "%s=%d ", n, $1/2}'; echo; done
done
