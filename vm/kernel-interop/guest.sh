#!/bin/bash
# The guest half of vm/kernel-interop-test.sh (runs inside the qemu guest as root: it creates network
# namespaces). Kernel RDS over TCP (rds_tcp) in namespace K (10.88.0.1), an rds4j node in namespace J
# (10.88.0.2), joined by veth. rds_tcp listens on port 16385 in every namespace, so rds4j listens on 16386 in J
# behind nftables: incoming 16385 is redirected to 16386, and rds4j's outgoing connects to 16386 are sent to
# the kernel's 16385. kernel_peer.py (in K) runs the suite and starts InteropDriver (in J) itself; then the
# `rds ping` tool pings the kernel.
#   usage: guest.sh JAVA RDS_JAR DIR [--smoke | --checks NAME,...]
set -uo pipefail
JAVA=$1 JAR=$2 DIR=$3; shift 3; MODE=$*
K=rds4j-kernel J=rds4j-java
fail() { echo "FAIL setup: $*"; exit 1; }
echo "guest kernel $(uname -r), $(nproc) CPUs"
modprobe rds_tcp || fail "modprobe rds_tcp"
ip netns add $K && ip netns add $J || fail "ip netns add"
ip link add vk netns $K type veth peer name vj netns $J || fail "veth"
ip -n $K addr add 10.88.0.1/24 dev vk && ip -n $J addr add 10.88.0.2/24 dev vj || fail "ip addr"
for ns in $K $J; do ip -n $ns link set lo up; done
ip -n $K link set vk up && ip -n $J link set vj up || fail "link up"
# a third namespace for a raw RDS-over-TCP peer (kernel_peer.py rawpeer) at 10.0.0.9, below the kernel's address
ip netns add rds4j-raw && ip link add vr netns rds4j-raw type veth peer name vk2 netns $K || fail "raw peer veth"
ip -n rds4j-raw addr add 10.0.0.9/24 dev vr && ip -n $K addr add 10.0.0.1/24 dev vk2 || fail "raw peer addresses"
ip -n rds4j-raw link set vr up && ip -n $K link set vk2 up && ip -n rds4j-raw link set lo up || fail "raw peer link up"
ip -n rds4j-raw route add 10.88.0.0/24 via 10.0.0.1 || fail "raw peer route"
ip netns exec $J nft -f - <<'NFT' || fail "nft"
table ip rds4j {
  chain pre { type nat hook prerouting priority -100; tcp dport 16385 redirect to :16386; }
  chain out { type nat hook output priority -100; tcp dport 16386 dnat to 10.88.0.1:16385; }
}
NFT
# the system's Python (socket.AF_RDS), not a per-user shim whose set-up the guest may lack
PY=/usr/bin/python3; [ -x $PY ] || PY=$(command -v python3) || fail "no python3"
rc=0
T0=$SECONDS
ip netns exec $K timeout 900 $PY -u "$DIR/kernel_peer.py" suite --java "$JAVA" --classpath "$JAR:$DIR/classes" \
  --dir "$DIR" $MODE || rc=1
echo "  (suite: $((SECONDS - T0)) s)"
# the handshake: the kernel's probe or pong answers rds4j's, and carries no generation, so rds4j knows it is kernel RDS
if grep -q "handshake done" "$DIR/rds4j.log" && grep -q "the peer is kernel RDS" "$DIR/rds4j.log"; then
  echo "PASS handshake: rds4j completed its handshake with the kernel and recognised it ($(grep -m1 -o 'the peer is kernel RDS[^:]*' "$DIR/rds4j.log"))"
else echo "FAIL handshake: the rds4j log lacks 'handshake done' or 'the peer is kernel RDS'"; rc=1; fi
# rds4j's ping tool against the kernel (rds4j is the higher address: it pokes and the kernel connects back)
RDS="$JAVA -XX:TieredStopAtLevel=1 -Dorg.slf4j.simpleLogger.defaultLogLevel=debug -jar $JAR"
ip netns exec $J timeout 120 $RDS ping 10.88.0.1 -c 5 --timeout 10s -I 10.88.0.2 --tcp-port 16386 > "$DIR/ping.log" 2>&1
grep -E "^seq=|rds ping" "$DIR/ping.log" | sed 's/^/  /'
if grep -q "5 sent, 5 received" "$DIR/ping.log"; then echo "PASS rds-ping: the rds ping tool got the kernel's pong to each of 5 pings"; \
  else echo "FAIL rds-ping: $(grep 'rds ping' "$DIR/ping.log" || tail -1 "$DIR/ping.log")"; rc=1; fi
exit $rc
