#!/bin/bash
# rttctx.sh [extra opts]: 64 B ping-pong through drivers (or embedded with EMB=1); per-thread voluntary switches and CPU over 3 s
JAR=${JAR:-compare/target/compare.jar}
P=$((22000 + RANDOM % 1000))
OPTS="--io block --agent-idle backoff --idle yield"; [ -z "$EMB" ] && OPTS="$OPTS --driver"
common="--port $P --tcp-port $((P+30)) --warmup 3 --duration 5 --grace 1 --start-timeout 40 --size 64 --warmup-rt 20000 --rt 400000"
java -Xms512m -Xmx512m -Djava.net.preferIPv4Stack=true -cp $JAR org.rds4j.compare.Main rds4j-rtt-server $common $OPTS $X --timeout 60 > /tmp/w/rs.out 2>/tmp/w/rs.err &
for i in $(seq 300); do grep -q READY /tmp/w/rs.out && break; sleep 0.1; done
java -Xms512m -Xmx512m -Djava.net.preferIPv4Stack=true -cp $JAR org.rds4j.compare.Main rds4j-rtt-client $common $OPTS $X --timeout 60 > /tmp/w/rc.out 2>/tmp/w/rc.err &
sleep ${AT:-12}
snap() { for p in $(pgrep java); do for t in /proc/$p/task/*; do n=$(cat $t/comm | tr ' ' '_'); v=$(awk '/^voluntary/{print $2}' $t/status); st=($(sed 's/.*) //' $t/stat)); echo "$p/${t##*/} $n $v $(( ${st[11]} + ${st[12]} ))"; done; done 2>/dev/null | sort; }
snap > /tmp/w/s0; sleep 3; snap > /tmp/w/s1
join /tmp/w/s0 /tmp/w/s1 | awk '{dv=$6-$3; dc=$7-$4; if (dv>100||dc>5) printf "%-28s %-8s vol/s=%d cpu=%d%%\n", $2, $1, dv/3, dc/3}'
wait
grep RESULT /tmp/w/rc.out | grep -o '"p50_us":[0-9.]*\|"p99_us":[0-9.]*' | tr '\n' ' '; echo
