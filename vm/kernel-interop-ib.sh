#!/bin/bash
# kernel-interop-ib.sh - an rds4j node and a Linux kernel RDS node (rds_rdma over Soft-RoCE, AF_RDS sockets from
# Python) exchange messages over IB in the qemu guest of vm/run-in-rxe-vm.sh (Debian 6.1 kernel). Both ways, who
# connects either way, 0 B to 1 MiB (multi-fragment) messages, several sockets on each side at once, pings both
# ways, streams larger than either side's send buffer (so only RDS acks can free them), an idle connection kept up by
# heartbeats, each with the kernel's IB flow control off (its default) and on; then, in a second guest, rds4j on the
# lower address; in a third, rds4j's node is a driver (rds driver --transport ib) that two client processes share. One PASS/FAIL line per check; exit status 0 only if all passed. 6-10 minutes (376 s in the run of results/interop-ib/).
#   usage: vm/kernel-interop-ib.sh            (builds samples/target/rds.jar if missing; REBUILD=1 always builds;
#                                              KERNEL_INTEROP_IB_GUESTS="driver" runs that guest only)
# Results and logs: samples/target/kernel-interop-ib/; with RDS4J_RECORD=1 its run.log (the check lines, counters
# and figures of both guests) is also copied to the folder results/new-run.sh makes. The guest set-up is
# vm/kernel-interop-ib/net.sh.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
JAR=$ROOT/samples/target/rds.jar
if [ ! -f "$JAR" ] || [ "${REBUILD:-0}" = 1 ]; then
  (cd "$ROOT" && mvn -B -q -o -pl samples -am package -DskipTests) || { echo "FAIL: build"; exit 1; }
fi
if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then JAVA=$JAVA_HOME/bin/java; else JAVA=$(command -v java); fi
JAVA=$(readlink -f "$JAVA")
DIR=$ROOT/samples/target/kernel-interop-ib
rm -rf "$DIR"; mkdir -p "$DIR"
cp "$ROOT"/vm/kernel-interop-ib/* "$DIR"/
cd "$ROOT"
RECORD=
if [ "${RDS4J_RECORD:-}" = 1 ]; then
  RECORD=$(JAVA=$JAVA "$ROOT/results/new-run.sh" interop-ib) || { echo "FAIL: results/new-run.sh"; exit 1; }
  echo "kernel-interop-ib: recording into $RECORD"
fi
start=$(date +%s)
rc=0
: > "$DIR/run.log"
# three guests: the kernel on the lower address (flow control off, then on), rds4j on the lower address, rds4j's node
# a driver; KERNEL_INTEROP_IB_GUESTS picks some of them (plain swapped driver)
for mode in ${KERNEL_INTEROP_IB_GUESTS:-plain swapped driver}; do
  [ "$mode" = plain ] && mode=
  case $mode in
    swapped) echo "---- a new guest: rds4j has the lower address" | tee -a "$DIR/run.log" ;;
    driver) echo "---- a new guest: rds4j's node is a driver and its client processes" | tee -a "$DIR/run.log" ;;
  esac
  RXE_VM_RW=$DIR RXE_VM_TIMEOUT=${KERNEL_INTEROP_VM_TIMEOUT:-1200} "$ROOT/vm/run-in-rxe-vm.sh" \
    "bash '$DIR/guest.sh' '$JAVA' '$JAR' '$DIR' $mode" 2>&1 | tee -a "$DIR/run.log"
  r=${PIPESTATUS[0]}; [ "$r" -eq 0 ] || rc=$r
  echo "kernel-interop-ib: guest${mode:+ ($mode)} exit status $r" | tee -a "$DIR/run.log"
done
SUMMARY="kernel-interop-ib: $(grep -c '^PASS' "$DIR/run.log") passed, $(grep -c '^FAIL' "$DIR/run.log") failed, $(( $(date +%s) - start )) s with the VM boot"
echo "$SUMMARY"
if [ -n "$RECORD" ]; then
  cp "$DIR/run.log" "$RECORD/" && echo "$SUMMARY" >> "$RECORD/run.log"
  echo "kernel-interop-ib: recorded in $RECORD"
fi
[ "$rc" -eq 0 ] && ! grep -q '^FAIL' "$DIR/run.log"
