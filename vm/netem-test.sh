#!/bin/bash
# netem-test.sh - rds4j under packet loss, duplication, corruption and delay (the kind of test the kernel's
# RDS selftest, tools/testing/selftests/net/rds, runs). Needs root; the host kernel needs no netem: the test
# runs in the qemu guest of vm/run-in-rxe-vm.sh (booted once), which has it.
#
# In the guest (vm/netem-guest.sh): two network namespaces joined by a veth pair, `tc netem` with the same
# settings on both ends, one FaultNode (rds4j stack, TCP transport, Java and jars from the host filesystem)
# in each namespace streaming to the other for NETEM_STREAM_MS. Then, in the same guest boot, the driver
# phase: the same in fresh namespaces for NETEM_DRIVER_STREAM_MS, with each node a client (FaultNode --driver) of a
# DriverNode in its namespace, so the connection that netem and ss -K hit is the two drivers'. On the host
# afterwards, for each phase: FaultCheck compares the two nodes' summaries per direction (count, bytes, SHA-256
# of the ordered stream, lost = duplicated = reordered = corrupt = 0, at least MIN_MESSAGES delivered (the driver
# phase: DRIVER_MIN_MESSAGES), and at least MIN_RETRANSMITTED of the sender's messages retransmitted by RDS; in
# the driver phase, each node's counters are its driver's), the script checks that netem dropped packets (else no
# fault was injected), that ss -K destroyed sockets and that every process exited 0 (and, in the driver phase,
# that each node's summary shows driver_clients_attached = 1), and prints the phase's FIGURES line and PASS or FAIL
# ("netem-test: ..." and "netem-test (driver mode): ..."). Exit status 0 if both phases PASS. A run much
# shorter than the defaults (60 s embedded, 30 s driver), or with kills off (nothing then makes RDS
# retransmit), fails the floors by design.
#
#   usage: vm/netem-test.sh            (from anywhere; builds fault-tests if its jars are missing)
#
# Knobs: NETEM_ARGS (netem settings of each end) ["loss 5% duplicate 5% corrupt 1% delay 2ms 1ms"],
# NETEM_STREAM_MS [60000], NETEM_DRIVER_STREAM_MS (the driver phase's; 0 = no driver phase) [60000],
# NETEM_MAX_SIZE (largest message) [2048], NETEM_KILL_EVERY_S (also destroy the nodes' TCP connection with ss -K
# in the guest this often, so RDS reconnects and retransmits over the lossy link; 0 = never) [5],
# NETEM_VM_TIMEOUT (s) [900], and the RXE_VM_* knobs of run-in-rxe-vm.sh. Results: fault-tests/target/netem/run-<time>/, the driver phase's in its
# driver/ folder; with RDS4J_RECORD=1 the small ones (the nodes' output with their summaries, check.txt,
# figures.txt, tc's statistics; the driver's output) are also copied to the folder results/new-run.sh makes
# (results/README.md).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
NETEM=${NETEM_ARGS:-loss 5% duplicate 5% corrupt 1% delay 2ms 1ms}
STREAM_MS=${NETEM_STREAM_MS:-60000}
MAX_SIZE=${NETEM_MAX_SIZE:-2048}
KILL_EVERY_S=${NETEM_KILL_EVERY_S:-5}
DRIVER_STREAM_MS=${NETEM_DRIVER_STREAM_MS:-60000}
MODULE=$ROOT/fault-tests
# Floors per direction. The slowest 60 s run recorded (single-threaded TCG, docs/reliability.md) delivered about
# 22,000 messages each way; a quarter of it leaves room for a busy host, while a run that stalled for most of
# its minute or streamed for a few seconds fails. At least one RDS retransmission each way: the ss -K kills
# must have hit a connection with unacked messages, else the run never tested RDS's own recovery.
MIN_MESSAGES=5000
MIN_RETRANSMITTED=1
# The driver phase: half the floor (four JVMs share the guest's CPU), the same retransmission floor. It streams as
# long as the embedded phase: on a host whose TCG is slow (2-vCPU AMD EPYC without svm, 2026-11-29) its JVMs took
# about 20 s to deliver a first message and 30 s to warm up, and 30 s streams delivered 1,500-2,200 a direction.
DRIVER_MIN_MESSAGES=2500

jars() { ls "$MODULE"/target/fault-tests-*.jar 2>/dev/null | grep -v -- '-tests.jar' | head -1; }
if [ -z "$(jars)" ] || [ ! -d "$MODULE/target/lib" ]; then
  echo "netem-test: building fault-tests (mvn -pl fault-tests -am package -DskipTests)"
  (cd "$ROOT" && mvn -B -q -ntp -pl fault-tests -am package -DskipTests) || { echo "netem-test: FAIL: build failed"; exit 1; }
fi
CP=$(jars):$(ls "$MODULE"/target/lib/*.jar | paste -sd:)
if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then JAVA=$JAVA_HOME/bin/java; else JAVA=$(command -v java); fi
JAVA=$(readlink -f "$JAVA")

RESULTS=$MODULE/target/netem/run-$(date +%Y%m%d-%H%M%S)
mkdir -p "$RESULTS"
RECORD=
if [ "${RDS4J_RECORD:-}" = 1 ]; then
  RECORD=$(JAVA=$JAVA "$ROOT/results/new-run.sh" netem) || { echo "netem-test: FAIL: results/new-run.sh"; exit 1; }
  echo "netem-test: recording into $RECORD"
fi
echo "netem-test: netem '$NETEM' on both ends, stream $STREAM_MS ms embedded, then $DRIVER_STREAM_MS ms with each node through a driver, messages up to $MAX_SIZE B; results in $RESULTS"
T0=$(date +%s.%N)
cd "$ROOT"
RXE_VM_RW=$RESULTS RXE_VM_TIMEOUT=${NETEM_VM_TIMEOUT:-900} "$ROOT/vm/run-in-rxe-vm.sh" \
  "bash '$ROOT/vm/netem-guest.sh' '$RESULTS' '$JAVA' '$CP' '$STREAM_MS' '$MAX_SIZE' '$NETEM' '$KILL_EVERY_S' '$DRIVER_STREAM_MS'"
GUEST_RC=$?
T1=$(date +%s.%N)

# check_phase DIR LABEL MIN_MESSAGES DRIVER(0|1): checks one phase's results in DIR (FaultCheck with the floors,
# netem dropped packets, ss -K destroyed sockets, every process exited 0; with DRIVER 1, each node went through its
# driver), prints its FIGURES line and its verdict (also kept in DIR/figures.txt), and returns 0 on PASS
check_phase() {
  local d=$1 label=$2 min_messages=$3 driver=$4
  for side in a b; do
    echo "--- node $side: last lines of its log ($d/node-$side.log)"; tail -n 3 "$d/node-$side.log" 2>/dev/null
  done
  # in the driver phase the nodes' connections are their drivers', and so are their log lines
  if [ "$driver" = 1 ]; then
    for side in a b; do
      echo "--- node $side's driver: last lines of its log ($d/driver-$side.log)"; tail -n 3 "$d/driver-$side.log"
    done
  fi
  "$JAVA" -cp "$CP" org.rds4j.faults.FaultCheck --min-messages $min_messages --min-retransmitted $MIN_RETRANSMITTED \
    "$d/node-a.out" "$d/node-b.out" | tee "$d/check.txt"
  local check_rc=${PIPESTATUS[0]}

  # figures: what netem did (tc -s: packets sent, dropped) and what TCP saw (retransmissions, checksum errors)
  tcfield() { sed -n "s/.*Sent [0-9]* bytes \([0-9]*\) pkt (dropped \([0-9]*\).*/\1 \2/p" "$d/tc-$1.txt" 2>/dev/null | head -1; }
  nstat1() { awk -v k="$2" '$1==k{print $2}' "$d/nstat-$1.txt" 2>/dev/null; }
  local pkt_a drop_a pkt_b drop_b retrans csum kill_rounds kills stream_s rc_a rc_b rc_da rc_db attached driver_ok=1
  read -r pkt_a drop_a <<< "$(tcfield a)"; read -r pkt_b drop_b <<< "$(tcfield b)"
  retrans=$(( $(nstat1 a TcpRetransSegs || echo 0) + $(nstat1 b TcpRetransSegs || echo 0) )) 2>/dev/null
  csum=$(( $(nstat1 a TcpInCsumErrors || echo 0) + $(nstat1 b TcpInCsumErrors || echo 0) )) 2>/dev/null
  read -r kill_rounds kills < "$d/kills.txt" 2>/dev/null
  stream_s=$(awk '{printf "%.1f", $2 - $1}' "$d/times.txt" 2>/dev/null)
  # the driver phase proves nothing unless each node's stack was its driver's: a node's summary's counters are then
  # its driver's, which counted exactly one client
  if [ "$driver" = 1 ]; then
    attached=
    for side in a b; do
      local n=$(grep -o '"driver_clients_attached":[0-9]*' "$d/node-$side.out" 2>/dev/null | cut -d: -f2)
      [ "${n:-0}" = 1 ] || driver_ok=0
      attached="$attached${attached:+ and }${n:-?}"
    done
  fi
  echo "FIGURES $label: netem '$NETEM' on both ends; packets a->b ${pkt_a:-?} (netem dropped ${drop_a:-?}), b->a ${pkt_b:-?} (dropped ${drop_b:-?}); TCP retransmitted segments ${retrans:-?}, TCP checksum errors ${csum:-?}; ss -K every ${KILL_EVERY_S} s: ${kill_rounds:-?} rounds, ${kills:-?} sockets destroyed; $(grep -E '^(PASS|FAIL)' "$d/check.txt"); ${attached+nodes a and b through their drivers: driver_clients_attached $attached; }nodes ran ${stream_s:-?} s, whole run $(awk -v a="$T0" -v b="$T1" 'BEGIN{printf "%.0f", b - a}') s" | tee "$d/figures.txt"

  # a run in which netem dropped nothing injected no fault: it proves nothing
  # (and, with kills on, a run in which ss -K destroyed nothing)
  local faults_ok=0; [ $(( ${drop_a:-0} + ${drop_b:-0} )) -gt 0 ] && faults_ok=1
  [ "$KILL_EVERY_S" -gt 0 ] && [ "${kills:-0}" -eq 0 ] && faults_ok=0
  # the processes' exit status (the guest's, per phase): nodes a and b, and their drivers in driver mode
  read -r rc_a rc_b rc_da rc_db < "$d/exit.txt" 2>/dev/null
  local exits_ok=0; [ "${rc_a:-?}" = 0 ] && [ "${rc_b:-?}" = 0 ] && { [ "$driver" = 0 ] || { [ "${rc_da:-?}" = 0 ] && [ "${rc_db:-?}" = 0 ]; }; } && exits_ok=1
  if [ $exits_ok = 1 ] && [ "$check_rc" = 0 ] && [ $faults_ok = 1 ] && [ $driver_ok = 1 ]; then
    VERDICT="$label: PASS"
  else
    VERDICT="$label: FAIL (guest exit $GUEST_RC, exit status of node a, node b${attached+, their drivers}: ${rc_a:-?} ${rc_b:-?}${attached+ ${rc_da:-?} ${rc_db:-?}}, check exit $check_rc, faults injected: $faults_ok${attached+, the nodes through their drivers: $driver_ok}; see $d)"
  fi
  echo "$VERDICT" | tee -a "$d/figures.txt"
  [[ $VERDICT == *PASS ]]
}

check_phase "$RESULTS" netem-test $MIN_MESSAGES 0; PASSED=$?
if [ "$DRIVER_STREAM_MS" -gt 0 ]; then
  check_phase "$RESULTS/driver" "netem-test (driver mode)" $DRIVER_MIN_MESSAGES 1 || PASSED=1
fi
if [ -n "$RECORD" ]; then
  cp "$RESULTS"/node-[ab].out "$RESULTS"/tc-[ab].txt "$RESULTS/check.txt" "$RESULTS/figures.txt" "$RECORD"/ 2>/dev/null
  if [ "$DRIVER_STREAM_MS" -gt 0 ]; then
    mkdir -p "$RECORD/driver"
    cp "$RESULTS"/driver/node-[ab].out "$RESULTS"/driver/driver-[ab].out "$RESULTS"/driver/tc-[ab].txt \
      "$RESULTS/driver/check.txt" "$RESULTS/driver/figures.txt" "$RECORD/driver"/ 2>/dev/null
  fi
  echo "netem-test: recorded in $RECORD"
fi
[ $PASSED = 0 ]
