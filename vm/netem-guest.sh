#!/bin/bash
# netem-guest.sh - the guest half of vm/netem-test.sh (runs inside the qemu guest, as root; do not run it
# on a host: it creates network namespaces). Two network namespaces joined by a veth pair, netem on both
# ends, one FaultNode (rds4j stack, TCP transport) in each namespace streaming to the other; the nodes'
# output and the netem/TCP statistics go to RESULTS. The host checks the results (FaultCheck).
#
#   usage: netem-guest.sh RESULTS JAVA CLASSPATH STREAM_MS MAX_SIZE 'NETEM ARGS' KILL_EVERY_S
#
# With KILL_EVERY_S > 0 it also destroys the nodes' TCP connection (ss -K in namespace a) every KILL_EVERY_S
# seconds while they stream, so that RDS reconnects and retransmits over the lossy link as well.
set -uo pipefail
R=$1 JAVA=$2 CP=$3 STREAM_MS=$4 MAX_SIZE=$5 NETEM=$6 KILL_EVERY_S=$7
NS_A=rds4j-netem-a NS_B=rds4j-netem-b
IP_A=10.99.0.1 IP_B=10.99.0.2
TCP_PORT=28030
DRAIN_MS=180000
# a node that outlives its stream plus its drain (and a slow JVM start) is killed
LIMIT_S=$(( (STREAM_MS + DRAIN_MS) / 1000 + 120 ))

say() { echo "netem-guest: $*"; }
fail() { echo "netem-guest: FAIL: $*" >&2; exit 1; }

modprobe veth && modprobe sch_netem || fail "modprobe veth/sch_netem"
ip netns add $NS_A && ip netns add $NS_B || fail "ip netns add"
ip link add veth-a netns $NS_A type veth peer name veth-b netns $NS_B || fail "ip link add veth"
ip -n $NS_A addr add $IP_A/24 dev veth-a && ip -n $NS_B addr add $IP_B/24 dev veth-b || fail "ip addr add"
for ns in $NS_A $NS_B; do ip -n $ns link set lo up; done
ip -n $NS_A link set veth-a up && ip -n $NS_B link set veth-b up || fail "ip link set up"
# netem on both ends: every packet either way meets loss, duplication, corruption and delay (with jitter,
# which also reorders packets)
tc -n $NS_A qdisc add dev veth-a root netem $NETEM || fail "tc netem on veth-a: $NETEM"
tc -n $NS_B qdisc add dev veth-b root netem $NETEM || fail "tc netem on veth-b: $NETEM"
tc -n $NS_A qdisc show dev veth-a

mkfifo /tmp/netem-in-a /tmp/netem-in-b || fail mkfifo
start() { # NS IP NAME
  timeout -k 5 $LIMIT_S ip netns exec "$1" "$JAVA" -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    -Dorg.slf4j.simpleLogger.defaultLogLevel=info -Dorg.slf4j.simpleLogger.showDateTime=true \
    -cp "$CP" org.rds4j.faults.FaultNode --bind "$2" --nodes $IP_A,$IP_B --tcp-port $TCP_PORT \
    --duration-ms "$STREAM_MS" --drain-ms $DRAIN_MS --max-size "$MAX_SIZE" --sndbuf 262144 --progress-ms 5000 \
    < /tmp/netem-in-$3 > "$R/node-$3.out" 2> "$R/node-$3.log"
}
start $NS_A $IP_A a & PID_A=$!
start $NS_B $IP_B b & PID_B=$!
exec 3> /tmp/netem-in-a 4> /tmp/netem-in-b

ready() { grep -qx READY "$R/node-$1.out" 2>/dev/null; }
for i in $(seq 1 240); do ready a && ready b && break; kill -0 $PID_A $PID_B 2>/dev/null || break; sleep 0.5; done
ready a && ready b || fail "nodes not READY after 120 s (see $R/node-*.log)"
say "both nodes READY; streaming for $STREAM_MS ms"
START=$(date +%s.%N)
echo GO >&3; echo GO >&4
KILLS=0 ROUNDS=0
if [ "$KILL_EVERY_S" -gt 0 ]; then
  KILL_UNTIL=$(( $(date +%s) + STREAM_MS / 1000 - KILL_EVERY_S ))
  while [ "$(date +%s)" -lt $KILL_UNTIL ] && kill -0 $PID_A $PID_B 2>/dev/null; do
    sleep "$KILL_EVERY_S"
    n=$(ip netns exec $NS_A ss -K -t -n -H dst $IP_B | grep -c .)
    KILLS=$((KILLS + n)); ROUNDS=$((ROUNDS + 1))
  done
fi
echo "$ROUNDS $KILLS" > "$R/kills.txt"
say "ss -K rounds $ROUNDS, sockets destroyed $KILLS"
wait $PID_A; RC_A=$?
wait $PID_B; RC_B=$?
END=$(date +%s.%N)
exec 3>&- 4>&-
echo "$START $END" > "$R/times.txt"
for side in a b; do
  ns=$NS_A; [ $side = b ] && ns=$NS_B
  tc -n $ns -s qdisc show dev veth-$side > "$R/tc-$side.txt"
  ip netns exec $ns nstat -az > "$R/nstat-$side.txt" 2>&1
done
say "node a exited $RC_A, node b exited $RC_B"
[ $RC_A = 0 ] && [ $RC_B = 0 ]
