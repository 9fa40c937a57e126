#!/bin/bash
# pdt.sh SIZE: pda.sh pair through drivers; 5 s in, per-thread CPU and switches of every compare JVM over 2 s
( sleep 5; bash /tmp/w/allthr.sh > /tmp/w/pdt-threads.txt ) &
DUR=${DUR:-8} /tmp/w/pda.sh "$@"
wait
cat /tmp/w/pdt-threads.txt
