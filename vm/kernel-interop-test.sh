#!/bin/bash
# kernel-interop-test.sh - interoperability of rds4j with the Linux kernel's RDS over TCP (rds_tcp), in the qemu
# guest of vm/run-in-rxe-vm.sh (Debian 6.1 kernel). A kernel RDS node (AF_RDS sockets driven from Python,
# vm/kernel-interop/kernel_peer.py) and an rds4j node (vm/kernel-interop/InteropDriver.java) in two network
# namespaces exchange messages; every check prints `PASS name: ...` or `FAIL name: ...` with what it measured.
# What is checked, what is compatible and the figures of the last run: docs/interop.md.
#   usage: vm/kernel-interop-test.sh [--smoke | --checks NAME,...]   (builds samples/target/rds.jar if missing)
# The default (full) run, 1-3 minutes: a kernel fact (kernel-seq0), streams both ways (3 x 3 sockets,
# 2700 messages each way, 0 B to 1 MiB), the delivery rule, pings both ways, congestion both ways, a restart
# of each side, connection resets during traffic (27000 messages each way) and rds4j's sequence-0 frames.
# --smoke (about 1 minute; CI runs the full suite): the same without the rds4j restart, the resets and the last check,
# and 20 messages per socket pair. --checks runs only the named checks of kernel_peer.py (kernel_seq0,
# streams, pings, congestion_j2k, congestion_k2j, restart_kernel, restart_rds4j, resets, no_seq0_frames).
# Needs root and nftables on the host (the guest uses the host's userspace). Results:
# samples/target/kernel-interop/ (run.log, rds4j.log); with RDS4J_RECORD=1 run.log (the check lines and figures,
# not the multi-MB rds4j.log) is also copied to the folder results/new-run.sh makes. Exit status 0 only if every
# check passed.
set -uo pipefail
MODE=
case "${1:-}" in
  --smoke) MODE=--smoke;;
  --checks) MODE="--checks ${2:?}";;  # only the named checks of kernel_peer.py (streams, resets, ...): for work on one
  "") ;;
  *) echo "usage: $0 [--smoke | --checks NAME,...]" >&2; exit 2;;
esac
ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
JAR=$ROOT/samples/target/rds.jar
[ -f "$JAR" ] || (cd "$ROOT" && mvn -B -q -ntp -pl samples -am package -DskipTests) || { echo "FAIL: build"; exit 1; }
command -v nft >/dev/null || { echo "FAIL: nft (nftables) is not installed on the host; the guest uses it"; exit 1; }
if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then JAVA=$JAVA_HOME/bin/java; else JAVA=$(command -v java); fi
JAVA=$(readlink -f "$JAVA")
JAVAC=$(dirname "$JAVA")/javac; [ -x "$JAVAC" ] || JAVAC=$(command -v javac) || { echo "FAIL: no javac"; exit 1; }
DIR=$ROOT/samples/target/kernel-interop
rm -rf "$DIR"; mkdir -p "$DIR/classes"
cp "$ROOT"/vm/kernel-interop/* "$DIR"/
"$JAVAC" -cp "$JAR" -d "$DIR/classes" "$DIR/InteropDriver.java" || { echo "FAIL: javac InteropDriver.java"; exit 1; }
cd "$ROOT"
RECORD=
if [ "${RDS4J_RECORD:-}" = 1 ]; then
  RECORD=$(JAVA=$JAVA "$ROOT/results/new-run.sh" interop-tcp) || { echo "FAIL: results/new-run.sh"; exit 1; }
  echo "arguments: ${*:-none (the full run)}" >> "$RECORD/meta.txt"
  echo "kernel-interop-test: recording into $RECORD"
fi
START=$SECONDS
RXE_VM_RW=$DIR RXE_VM_TIMEOUT=${KERNEL_INTEROP_VM_TIMEOUT:-1200} "$ROOT/vm/run-in-rxe-vm.sh" \
  "bash '$DIR/guest.sh' '$JAVA' '$JAR' '$DIR' $MODE" 2>&1 | tee "$DIR/run.log"
rc=${PIPESTATUS[0]}
SUMMARY="kernel-interop-test: $(grep -c '^PASS' "$DIR/run.log") passed, $(grep -c '^FAIL' "$DIR/run.log") failed, $((SECONDS - START)) s (guest exit status $rc)"
echo "$SUMMARY"
if [ -n "$RECORD" ]; then
  cp "$DIR/run.log" "$RECORD/" && echo "$SUMMARY" >> "$RECORD/run.log"
  echo "kernel-interop-test: recorded in $RECORD"
fi
[ "$rc" -eq 0 ] && ! grep -q '^FAIL' "$DIR/run.log"
