#!/bin/bash
# The guest half of vm/kernel-interop-ib.sh (runs inside the qemu guest as root). Kernel RDS over IB (rds_rdma) on
# 10.89.0.1 (rxek over veth end vk, initial network namespace) and an rds4j node on 10.89.0.2 in namespace J
# (rdma_cm listens on port 18634 per namespace, and rds_rdma holds it in the initial one); net.sh explains the
# wiring. Each check prints one PASS or FAIL line.
#   usage: guest.sh JAVA RDS_JAR DIR [swapped]
# swapped: rds4j gets the lower address (10.89.0.1), and only the kernel's default (flow control off) is run,
# without the streams. driver: rds4j's node is a driver (rds driver --transport ib) with client processes (rds echo
# and rds ping --driver); the kernel's default only.
set -uo pipefail
JAVA=$1 JAR=$2 DIR=$3 MODE=${4:-}
K=10.89.0.1 R=10.89.0.2 FCS="0 1" T=
[ "$MODE" = swapped ] && { K=10.89.0.2 R=10.89.0.1 FCS=0 T=-swapped; }
[ "$MODE" = driver ] && { FCS= T=-driver; }
SIZES=0,100,4095,4096,4097,65536,1048576
fail() { echo "FAIL setup: $*"; exit 1; }
. "$DIR/net.sh" || fail "network set-up (net.sh)"
# kernel RDS refuses a message larger than half the socket's send buffer (EMSGSIZE): allow 1 MiB messages
sysctl -qw net.core.wmem_max=33554432 net.core.rmem_max=33554432 || fail "sysctl net.core.[rw]mem_max"
PY=/usr/bin/python3; [ -x $PY ] || PY=$(command -v python3) || fail "no python3"
PEER="$PY -u $DIR/kernel_ib_peer.py"
JOPTS="-XX:TieredStopAtLevel=1 -Dorg.slf4j.simpleLogger.defaultLogLevel=info -Dorg.slf4j.simpleLogger.log.org.rds4j.transport.ib=debug"
DRIVER="ip netns exec J $JAVA $JOPTS -cp $JAR $DIR/Driver.java"
RDS="ip netns exec J $JAVA $JOPTS -jar $JAR"
rc=0
echo "guest: kernel $(uname -r), $(rdma link show | tr '\n' ';')"
check() { # NAME COMMAND...: a check that prints its own PASS/FAIL line; a timeout or crash is a FAIL here
  local name=$1; shift
  "$@"; local code=$?
  [ $code -eq 0 ] || { echo "FAIL $name: exit status $code (124: timed out)"; rc=1; }
  return $code # run in the background, a check's rc=1 is lost with its subshell: its waiter needs the status
}
kernel_conn() { # PATTERN NAME TEXT: the kernel logged a connection line matching PATTERN since the last mark
  # grep reads to the end (not -q): under pipefail, sed killed by SIGPIPE after an early match would fail the check
  if dmesg | sed -n "/rds4j-interop-mark $MARK\$/,\$p" | grep "$1" > /dev/null; then echo "PASS $2: $3"; \
    else echo "FAIL $2: no kernel line '$1'; it logged: $(dmesg | sed -n "/rds4j-interop-mark $MARK\$/,\$p" | grep RDS/IB | tail -3)"; rc=1; fi
}
MARK=0
mark() { MARK=$((MARK + 1)); echo "rds4j-interop-mark $MARK" > /dev/kmsg; }
stop() { # PID NAME: ends a background helper; one that had already ended with an error is a FAIL
  if kill -0 "$1" 2>/dev/null; then kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; return; fi
  wait "$1"; local code=$?
  [ $code -eq 0 ] || { echo "FAIL $2: ended early with exit status $code"; rc=1; }
}
kernel_to_echo() { # SUFFIX WHO RDS-ECHO-OPTIONS...: starts rds echo on R:5000 (ECHO its pid), 3 kernel sockets at once to
  # it, sizes 0 B..1 MiB, then kernel pings; the kernel must have connected (WHO accepted)
  local sfx=$1 who=$2; shift 2
  $RDS echo --bind $R:5000 "$@" > "$DIR/echo$sfx.log" 2>&1 &
  ECHO=$!
  for i in $(seq 1 300); do grep -q "bound to" "$DIR/echo$sfx.log" && break; sleep 0.2; done
  grep -q "bound to" "$DIR/echo$sfx.log" || { echo "FAIL setup: rds echo $* did not start: $(tail -3 "$DIR/echo$sfx.log")"; rc=1; }
  local pids= p
  for p in 4000 4001 4002; do check "kernel->rds4j$sfx $p" timeout 240 $PEER client $K $p $R 5000 2 $SIZES & pids="$pids $!"; done
  for p in $pids; do wait $p || rc=1; done
  check "kernel ping$sfx" timeout 60 $PEER ping $K 4100 $R 5
  kernel_conn "Active conn connected <::ffff:$K,::ffff:$R,0> version" "connect kernel->rds4j$sfx" \
    "the kernel connected, $who accepted ($(dmesg | grep -o 'Active conn connected.*' | tail -1))"
}

for FC in $FCS; do
  sysctl -qw net.rds.ib.flow_control=$FC || fail "sysctl net.rds.ib.flow_control=$FC"
  echo "---- kernel net.rds.ib.flow_control=$FC"
  S=$T; [ $FC = 1 ] && S=-fc
  # 1. rds4j connects: 3 rds4j sockets x 3 kernel echo sockets, sizes 0 B..1 MiB
  mark
  $PEER echo $K 7000,7001,7002 25 > "$DIR/kecho$S.log" 2>&1 &
  KECHO=$!
  sleep 2
  check "rds4j->kernel$S" timeout 240 $DRIVER client $R $K 7000,7001,7002 3 2 $SIZES 2> "$DIR/driver$S.log"
  stop $KECHO "kernel echo$S"; cat "$DIR/kecho$S.log"
  if [ $FC = 0 ]; then # the first connection of the run: nothing is queued in the kernel, rds4j connects
    kernel_conn "Passive conn connected <::ffff:$K,::ffff:$R,0> version 4.1" "connect rds4j->kernel$S" \
      "rds4j connected, the kernel accepted protocol 4.1 ($(dmesg | grep -o 'Passive conn connected.*' | tail -1))"
  else # the kernel may hold unacked messages from the previous rds4j process: then it connects first
    kernel_conn "conn connected <::ffff:$K,::ffff:$R,0> version .*, flow control" "connect$S" \
      "the kernel turned its flow control on for rds4j's credits ($(dmesg | grep -o '[A-Za-z]* conn connected.*' | tail -1))"
  fi
  grep "established" "$DIR/driver$S.log" | tail -1
  # 2. the kernel connects: 3 kernel sockets at once to an rds4j echo, sizes 0 B..1 MiB; then kernel pings
  mark
  kernel_to_echo "$S" rds4j --transport ib
  grep "established" "$DIR/echo$S.log" | tail -1
  $PEER counters ib_ack_ s_send_ack recv_drop recv_ack_required send_ack_required
  stop $ECHO "rds echo$S"
  # 3. rds4j pings the kernel (a new rds4j process: one rds4j stack per namespace can hold port 18634)
  if timeout 90 $RDS ping $K -c 3 -I $R --transport ib --timeout 15s > "$DIR/ping$S.log" 2>&1 && grep -q "^seq=.* from $K" "$DIR/ping$S.log"; then
    echo "PASS rds ping$S: $(grep -c "^seq=.* from $K" "$DIR/ping$S.log") pongs from the kernel to rds ping --transport ib"
  else echo "FAIL rds ping$S: no pong from the kernel: $(tail -3 "$DIR/ping$S.log")"; rc=1; fi
  if [ "$MODE" != swapped ]; then
  # 4. a one-way stream larger than rds4j's send buffer (16 MiB): only the kernel's RDS acks free it
  $PEER sink $K 7100 $R 6100 41 300 65536,4096,100,0,1048576 > "$DIR/sink$S.log" 2>&1 &
  SINK=$!
  sleep 2
  rm -f "$DIR/sink.done"
  DONE="-Ddone.file=$DIR/sink.done"
  timeout 240 ip netns exec J $JAVA $JOPTS $DONE -cp $JAR $DIR/Driver.java source $R 6100 $K 7100 41 300 \
    65536,4096,100,0,1048576 2> "$DIR/source$S.log" &
  SOURCE=$!
  wait $SINK; src=$?
  touch "$DIR/sink.done"; wait $SOURCE || { echo "FAIL stream$S: the rds4j source failed: $(tail -3 "$DIR/source$S.log")"; rc=1; }
  cat "$DIR/sink$S.log"
  [ $src -eq 0 ] || rc=1
  grep -q PASS "$DIR/sink$S.log" || { echo "FAIL stream$S: the sink did not pass (exit $src)"; rc=1; }
  # 5. a one-way stream from the kernel larger than the kernel socket's send buffer: rds4j's acks must free it
  #    (the kernel source returns once rds4j has acked every message; the rds4j sink stays open until then)
  rm -f "$DIR/ksink.done"
  ip netns exec J $JAVA $JOPTS -Ddone.file=$DIR/ksink.done -cp $JAR $DIR/Driver.java sink $R 6300 $K 7300 43 300 \
    65536,4096,100,0,1048576 > "$DIR/ksink$S.log" 2>&1 &
  KSINK=$!
  for i in $(seq 1 300); do grep -q "bound to" "$DIR/ksink$S.log" && break; sleep 0.2; done
  timeout 240 $PEER source $K 7300 $R 6300 43 300 65536,4096,100,0,1048576 > "$DIR/ksource$S.log" 2>&1; krc=$?
  cat "$DIR/ksource$S.log"
  [ $krc -eq 0 ] || { echo "FAIL kernel->rds4j stream$S: the kernel source failed (exit $krc, 124: timed out): $(tail -3 "$DIR/ksource$S.log")"; rc=1; }
  touch "$DIR/ksink.done"
  wait $KSINK || rc=1
  grep -E "^(PASS|FAIL)" "$DIR/ksink$S.log"
  grep -q "^PASS" "$DIR/ksink$S.log" || { echo "FAIL kernel->rds4j stream$S: the rds4j sink did not pass: $(grep -v TRACE "$DIR/ksink$S.log" | tail -12)"; rc=1; }
  fi
  # 6. an idle connection stays up: rds4j's heartbeats (empty ACK_REQUIRED messages from port 1 to port 1) get kernel acks
  $PEER echo $K 7400 40 > "$DIR/kidle$S.log" 2>&1 &
  KIDLE=$!
  sleep 2
  timeout 120 ip netns exec J $JAVA $JOPTS -Dorg.slf4j.simpleLogger.log.org.rds4j.transport.ib.IbPath=trace -cp $JAR \
    $DIR/Driver.java idle $R $K 7400 15 > "$DIR/idle$S.log" 2>&1; irc=$?
  stop $KIDLE "kernel echo for idle$S"
  hb=$(grep -c "sending 48 bytes: seq [1-9][0-9]* ack [0-9]* len 0 1->1" "$DIR/idle$S.log")
  acks=$(grep -c "received 48 bytes: seq 0 ack [1-9][0-9]* len 0 0->0" "$DIR/idle$S.log")
  if [ $irc -eq 0 ] && [ "$hb" -ge 5 ] && [ "$acks" -ge "$hb" ] && ! grep -q "WARN" "$DIR/idle$S.log"; then
    echo "PASS idle$S: the connection stayed up through 15 s of silence (heartbeat timeout 10 s): $hb heartbeats, $acks kernel acks"
  else echo "FAIL idle$S: exit $irc, $hb heartbeats, $acks acks: $(grep -hE "FAIL|WARN" "$DIR/idle$S.log" | head -2)"; rc=1; fi
  if grep -q "WARN" "$DIR"/*$S.log 2>/dev/null; then
    echo "FAIL rds4j warnings$S: $(grep -h WARN "$DIR"/*$S.log | head -3)"; rc=1
  else echo "PASS rds4j warnings$S: no WARN line in the rds4j logs (no dropped connection, no bad frame)"; fi
done
if [ "$MODE" = driver ]; then
  # rds4j's node is one driver process in namespace J; its clients bind, send and receive through it
  mark
  DD=/dev/shm/rds4j-interop-driver
  $RDS driver --dir $DD --transport ib > "$DIR/rdsdriver$T.log" 2>&1 &
  DRV=$!
  for i in $(seq 1 300); do grep -q "serving" "$DIR/rdsdriver$T.log" && break; sleep 0.2; done
  grep -q "serving" "$DIR/rdsdriver$T.log" || { echo "FAIL setup: rds driver did not start: $(tail -3 "$DIR/rdsdriver$T.log")"; rc=1; }
  kernel_to_echo "$T" "rds4j's driver" --driver $DD
  # a second client process of the same driver: it shares the driver's connection to the kernel
  if timeout 90 $RDS ping $K -c 3 -I $R --driver $DD --timeout 15s > "$DIR/ping$T.log" 2>&1 && grep -q "^seq=.* from $K" "$DIR/ping$T.log"; then
    echo "PASS rds ping$T: $(grep -c "^seq=.* from $K" "$DIR/ping$T.log") pongs from the kernel to rds ping --driver, beside rds echo on the same driver"
  else echo "FAIL rds ping$T: no pong from the kernel: $(tail -3 "$DIR/ping$T.log")"; rc=1; fi
  conns=$(dmesg | sed -n "/rds4j-interop-mark $MARK\$/,\$p" | grep -c "conn connected <::ffff:$K,::ffff:$R,0>")
  if [ "$conns" -eq 1 ]; then echo "PASS one connection$T: the kernel logged 1 connection to the driver for its 2 client processes"
  else echo "FAIL one connection$T: the kernel logged $conns connections to rds4j's address since the driver started"; rc=1; fi
  stop $ECHO "rds echo$T"
  stop $DRV "rds driver$T"
  if grep -q "WARN" "$DIR"/*$T.log 2>/dev/null; then
    echo "FAIL rds4j warnings$T: $(grep -h WARN "$DIR"/*$T.log | head -3)"; rc=1
  else echo "PASS rds4j warnings$T: no WARN line in the driver's and its clients' logs"; fi
fi
dmesg > "$DIR/dmesg$T.log"
procs=$(ls "$DIR"/*$T.log | grep -cE "/(driver|rdsdriver|echo|ping|source|ksink|idle)(-fc)?$T\.log\$")
if grep -qE "WARNING|BUG|Oops|RIP:|Call Trace|corrupted header|didn't include|fragment header mismatch|incompatible" "$DIR/dmesg$T.log"; then
  echo "FAIL kernel log$T: $(grep -E "WARNING|BUG|Oops|corrupted|didn't include|mismatch|incompatible" "$DIR/dmesg$T.log" | head -3)"; rc=1
else
  who="$procs rds4j processes (each a new generation)"; [ "$MODE" = driver ] && who="a driver and its $((procs - 1)) client processes"
  echo "PASS kernel log$T: $who came and went; the kernel logged no warning, oops, bad header or protocol error"
fi
exit $rc
