#!/bin/bash
# The guest half of vm/kernel-interop-test.sh (runs inside the qemu guest as root: it creates network
# namespaces). Kernel RDS over TCP (rds_tcp) in namespace K (10.88.0.1), an rds4j node in namespace J
# (10.88.0.2), joined by veth. rds_tcp listens on port 16385 in every namespace, so rds4j listens on 16386 in J
# behind nftables: incoming 16385 is redirected to 16386, and rds4j's outgoing connects to 16386 are sent to
# the kernel's 16385.
#   usage: guest.sh JAVA RDS_JAR DIR ECHO_COUNT
set -uo pipefail
JAVA=$1 JAR=$2 DIR=$3 COUNT=$4
K=rds4j-kernel J=rds4j-java
fail() { echo "FAIL: $*"; exit 1; }
modprobe rds_tcp || fail "modprobe rds_tcp"
ip netns add $K && ip netns add $J || fail "ip netns add"
ip link add vk netns $K type veth peer name vj netns $J || fail "veth"
ip -n $K addr add 10.88.0.1/24 dev vk && ip -n $J addr add 10.88.0.2/24 dev vj || fail "ip addr"
for ns in $K $J; do ip -n $ns link set lo up; done
ip -n $K link set vk up && ip -n $J link set vj up || fail "link up"
ip netns exec $J nft -f - <<'NFT' || fail "nft"
table ip rds4j {
  chain pre { type nat hook prerouting priority -100; tcp dport 16385 redirect to :16386; }
  chain out { type nat hook output priority -100; tcp dport 16386 dnat to 10.88.0.1:16385; }
}
NFT
# the system's Python (socket.AF_RDS), not a per-user shim whose set-up the guest may lack
PY=/usr/bin/python3; [ -x $PY ] || PY=$(command -v python3) || fail "no python3"
RDS="$JAVA -XX:TieredStopAtLevel=1 -Dorg.slf4j.simpleLogger.defaultLogLevel=debug -jar $JAR"
rc=0
# 1. kernel -> rds4j and back: rds echo answers every datagram to its sender
ip netns exec $J timeout 300 $RDS echo --bind 10.88.0.2:5000 --tcp-port 16386 > "$DIR/echo.log" 2>&1 &
ECHO=$!
for i in $(seq 1 300); do grep -q "bound to" "$DIR/echo.log" && break; sleep 0.2; done
grep -q "bound to" "$DIR/echo.log" || fail "rds echo did not start: $(tail -3 "$DIR/echo.log")"
check() { # NAME COMMAND...: a check that prints its own PASS line; a timeout or crash is a FAIL here
  local name=$1; shift
  "$@"; local code=$?
  [ $code -eq 0 ] || { echo "FAIL $name: exit status $code (124: timed out)"; rc=1; }
}
check echo-4000 ip netns exec $K timeout 60 $PY -u "$DIR/kernel_peer.py" echo 10.88.0.1 4000 10.88.0.2 5000 $COUNT
check echo-4001 ip netns exec $K timeout 60 $PY -u "$DIR/kernel_peer.py" echo 10.88.0.1 4001 10.88.0.2 5000 $COUNT
# 2. a kernel socket pings port 0 of the rds4j node
check ping ip netns exec $K timeout 60 $PY -u "$DIR/kernel_peer.py" ping 10.88.0.1 4100 10.88.0.2 5
kill $ECHO; wait $ECHO 2>/dev/null
grep -q "handshake done" "$DIR/echo.log" && echo "PASS handshake: rds4j completed its handshake with the kernel" \
  || { echo "FAIL handshake: no 'handshake done' in the rds4j log"; rc=1; }
# 3. rds4j pings the kernel (rds4j is the higher address: it pokes and the kernel connects back)
ip netns exec $J timeout 120 $RDS ping 10.88.0.1 -c 5 -I 10.88.0.2 --tcp-port 16386 > "$DIR/ping.log" 2>&1
grep -E "^seq=|rds ping" "$DIR/ping.log"
if grep -q "^seq=.* from 10.88.0.1" "$DIR/ping.log"; then echo "PASS rds ping: the kernel answered"; \
  else echo "FAIL rds ping: no pong from the kernel"; rc=1; fi
exit $rc
