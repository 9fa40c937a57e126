#!/bin/bash
# usage: csw.sh RT WINDOW_S [extra compare opts]  -- driver rtt pair; per-thread ctx switches + cpu over a window
cd ${ROOT:-/work/main}
RT=$1; WIN=$2; shift 2
J="-Xms512m -Xmx512m -XX:+UseG1GC -Djava.net.preferIPv4Stack=true -Dorg.slf4j.simpleLogger.defaultLogLevel=info"
C="--port 21000 --tcp-port 21030 --warmup 2 --duration 5 --grace 1 --start-timeout 40 --size 64 --warmup-rt 20000 --rt $RT --io block --agent-idle backoff --idle yield --driver $*"
java $J -cp compare/target/compare.jar org.rds4j.compare.Main rds4j-rtt-server $C --timeout 200 > /tmp/w/p.out 2>/tmp/w/p.err &
P=$!
for i in $(seq 100); do grep -q READY /tmp/w/p.out 2>/dev/null && break; sleep 0.1; done
java $J -cp compare/target/compare.jar org.rds4j.compare.Main rds4j-rtt-client $C --timeout 200 > /tmp/w/a.out 2>/tmp/w/a.err &
A=$!
sleep 6
snap() { for p in $(pgrep -f 'org.rds4j.compare.Main'); do for t in /proc/$p/task/*; do
  n=$(tr " " _ < $t/comm); v=$(awk '/^voluntary_ctxt/{print $2}' $t/status); nv=$(awk '/^nonvoluntary_ctxt/{print $2}' $t/status)
  c=$(awk '{print $14+$15}' $t/stat); echo "$p/${t##*/} $n $v $nv $c"; done; done; }
snap > /tmp/w/s1; sleep $WIN; snap > /tmp/w/s2
wait $A; kill $P; wait $P 2>/dev/null
grep RESULT /tmp/w/a.out | sed 's/.*"p50_us":\([0-9.]*\),"p90_us":\([0-9.]*\),"p99_us":\([0-9.]*\).*"mean_us":\([0-9.]*\).*/p50 \1 p90 \2 p99 \3 mean \4/'
MEAN=$(grep RESULT /tmp/w/a.out | sed 's/.*"mean_us":\([0-9.]*\).*/\1/')
join <(sort /tmp/w/s1) <(sort /tmp/w/s2) | awk -v win=$WIN -v mean=$MEAN '{rt=win*1e6/mean; dv=$7-$3; dn=$8-$4; dc=$9-$5; if (dv+dn>100) printf "%-14s %-28s vol/rt %6.3f invol/rt %6.3f cpu%% %5.1f\n", $1, $2, dv/rt, dn/rt, dc/win}'
