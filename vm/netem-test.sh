#!/bin/bash
# netem-test.sh - rds4j under packet loss, duplication, corruption and delay (the kind of test the kernel's
# RDS selftest, tools/testing/selftests/net/rds, runs). Needs root; the host kernel needs no netem: the test
# runs in the qemu guest of vm/run-in-rxe-vm.sh (booted once), which has it.
#
# In the guest (vm/netem-guest.sh): two network namespaces joined by a veth pair, `tc netem` with the same
# settings on both ends, one FaultNode (rds4j stack, TCP transport, Java and jars from the host filesystem)
# in each namespace streaming to the other for NETEM_STREAM_MS. On the host afterwards: FaultCheck compares
# the two nodes' summaries per direction (count, bytes, SHA-256 of the ordered stream, lost = duplicated =
# reordered = corrupt = 0, at least MIN_MESSAGES delivered, and at least MIN_RETRANSMITTED of the sender's
# messages retransmitted by RDS), the script checks that netem dropped packets (else no fault was injected),
# and prints one FIGURES line and PASS or FAIL. Exit status 0 on PASS. A run much shorter than the default
# 60 s, or with kills off (nothing then makes RDS retransmit), fails the floors by design.
#
#   usage: vm/netem-test.sh            (from anywhere; builds fault-tests if its jars are missing)
#
# Knobs: NETEM_ARGS (netem settings of each end) ["loss 5% duplicate 5% corrupt 1% delay 2ms 1ms"],
# NETEM_STREAM_MS [60000], NETEM_MAX_SIZE (largest message) [2048], NETEM_KILL_EVERY_S (also destroy the
# nodes' TCP connection with ss -K in the guest this often, so RDS reconnects and retransmits over the lossy
# link; 0 = never) [5], NETEM_VM_TIMEOUT (s) [900], and the
# RXE_VM_* knobs of run-in-rxe-vm.sh. Results: fault-tests/target/netem/run-<time>/; with RDS4J_RECORD=1 the
# small ones (the nodes' output with their summaries, check.txt, figures.txt, tc's statistics) are also copied
# to the folder results/new-run.sh makes (results/README.md).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
NETEM=${NETEM_ARGS:-loss 5% duplicate 5% corrupt 1% delay 2ms 1ms}
STREAM_MS=${NETEM_STREAM_MS:-60000}
MAX_SIZE=${NETEM_MAX_SIZE:-2048}
KILL_EVERY_S=${NETEM_KILL_EVERY_S:-5}
MODULE=$ROOT/fault-tests
# Floors per direction. The slowest 60 s run recorded (single-threaded TCG, docs/reliability.md) delivered about
# 22,000 messages each way; a quarter of it leaves room for a busy host, while a run that stalled for most of
# its minute or streamed for a few seconds fails. At least one RDS retransmission each way: the ss -K kills
# must have hit a connection with unacked messages, else the run never tested RDS's own recovery.
MIN_MESSAGES=5000
MIN_RETRANSMITTED=1

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
echo "netem-test: netem '$NETEM' on both ends, stream $STREAM_MS ms, messages up to $MAX_SIZE B; results in $RESULTS"
T0=$(date +%s.%N)
cd "$ROOT"
RXE_VM_RW=$RESULTS RXE_VM_TIMEOUT=${NETEM_VM_TIMEOUT:-900} "$ROOT/vm/run-in-rxe-vm.sh" \
  "bash '$ROOT/vm/netem-guest.sh' '$RESULTS' '$JAVA' '$CP' '$STREAM_MS' '$MAX_SIZE' '$NETEM' '$KILL_EVERY_S'"
GUEST_RC=$?
T1=$(date +%s.%N)

for side in a b; do
  echo "--- node $side: last lines of its log ($RESULTS/node-$side.log)"; tail -n 3 "$RESULTS/node-$side.log" 2>/dev/null
done
"$JAVA" -cp "$CP" org.rds4j.faults.FaultCheck --min-messages $MIN_MESSAGES --min-retransmitted $MIN_RETRANSMITTED \
  "$RESULTS/node-a.out" "$RESULTS/node-b.out" | tee "$RESULTS/check.txt"
CHECK_RC=${PIPESTATUS[0]}

# figures: what netem did (tc -s: packets sent, dropped) and what TCP saw (retransmissions, checksum errors)
tcfield() { sed -n "s/.*Sent [0-9]* bytes \([0-9]*\) pkt (dropped \([0-9]*\).*/\1 \2/p" "$RESULTS/tc-$1.txt" 2>/dev/null | head -1; }
nstat1() { awk -v k="$2" '$1==k{print $2}' "$RESULTS/nstat-$1.txt" 2>/dev/null; }
read -r PKT_A DROP_A <<< "$(tcfield a)"; read -r PKT_B DROP_B <<< "$(tcfield b)"
RETRANS=$(( $(nstat1 a TcpRetransSegs || echo 0) + $(nstat1 b TcpRetransSegs || echo 0) )) 2>/dev/null
CSUM=$(( $(nstat1 a TcpInCsumErrors || echo 0) + $(nstat1 b TcpInCsumErrors || echo 0) )) 2>/dev/null
read -r KILL_ROUNDS KILLS < "$RESULTS/kills.txt" 2>/dev/null
STREAM_S=$(awk '{printf "%.1f", $2 - $1}' "$RESULTS/times.txt" 2>/dev/null)
echo "FIGURES netem-test: netem '$NETEM' on both ends; packets a->b ${PKT_A:-?} (netem dropped ${DROP_A:-?}), b->a ${PKT_B:-?} (dropped ${DROP_B:-?}); TCP retransmitted segments ${RETRANS:-?}, TCP checksum errors ${CSUM:-?}; ss -K every ${KILL_EVERY_S} s: ${KILL_ROUNDS:-?} rounds, ${KILLS:-?} sockets destroyed; $(grep -E '^(PASS|FAIL)' "$RESULTS/check.txt"); nodes ran ${STREAM_S:-?} s, whole run $(awk -v a="$T0" -v b="$T1" 'BEGIN{printf "%.0f", b - a}') s" | tee "$RESULTS/figures.txt"

# a run in which netem dropped nothing injected no fault: it proves nothing
# (and, with kills on, a run in which ss -K destroyed nothing)
FAULTS_OK=0; [ $(( ${DROP_A:-0} + ${DROP_B:-0} )) -gt 0 ] && FAULTS_OK=1
[ "$KILL_EVERY_S" -gt 0 ] && [ "${KILLS:-0}" -eq 0 ] && FAULTS_OK=0
if [ $GUEST_RC = 0 ] && [ "$CHECK_RC" = 0 ] && [ $FAULTS_OK = 1 ]; then
  VERDICT="netem-test: PASS"
else
  VERDICT="netem-test: FAIL (guest exit $GUEST_RC, check exit $CHECK_RC, faults injected: $FAULTS_OK; see $RESULTS)"
fi
echo "$VERDICT"
if [ -n "$RECORD" ]; then
  cp "$RESULTS"/node-[ab].out "$RESULTS"/tc-[ab].txt "$RESULTS/check.txt" "$RESULTS/figures.txt" "$RECORD"/ 2>/dev/null
  echo "$VERDICT" >> "$RECORD/figures.txt"
  echo "netem-test: recorded in $RECORD"
fi
[[ $VERDICT == *PASS ]]
