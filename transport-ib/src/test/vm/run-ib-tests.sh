#!/usr/bin/env bash
# Runs the IB tests in a qemu guest with Soft-RoCE (rxe0 on a dummy eth0, 10.77.0.1 and 10.77.0.2):
#  1. VerbsSmoke: the verbs binding and the struct-offset/ABI checks on a live device;
#  2. IbStackTests: two rds4j stacks over the IB transport (selection, one-to-one, all-to-all, 1 MiB
#     messages, credits exhausted, crossed connects, tear-down under load, idle agents' wake-ups); one
#     PASS/FAIL line per case;
#  3. with IB_BENCH=1, IbBench (the figures of docs/transport-ib.md) and ibv_rc_pingpong / perftest.
# Builds transport-ib and its test classes on the host (offline Maven), then boots the guest with the
# rxe-vm harness and runs plain `java -cp` there (Maven cannot run in the guest). Exit status: non-zero if
# any step failed.
#   transport-ib/src/test/vm/run-ib-tests.sh [messages-each-way [case ...]]   (default 4000, all cases)
# 0 messages skips the smoke; IB_TESTS=0 skips IbStackTests; IB_BENCH=1 adds the figures.
# RDS4J_RECORD=1 copies the log (smoke.log) into the folder results/new-run.sh makes (results/README.md).
# Extra JVM options: RDS4J_IB_JAVA_OPTS (e.g. -Drds4j.ib.opsCall=jna). SKIP_BUILD=1 skips the host build.
# Harness: $RXE_VM_SCRIPT, else vm/run-in-rxe-vm.sh at the repo root, else /work/shared/tools/rxe-vm/.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
MODULE=$(cd "$HERE/../../.." && pwd)
ROOT=$(cd "$MODULE/.." && pwd)
COUNT=${1:-4000}
shift || true
CASES="$*"
HARNESS=${RXE_VM_SCRIPT:-}
if [ -z "$HARNESS" ]; then
  for h in "$ROOT/vm/run-in-rxe-vm.sh" /work/shared/tools/rxe-vm/run-in-rxe-vm.sh; do
    [ -x "$h" ] && { HARNESS=$h; break; }
  done
fi
[ -n "$HARNESS" ] || { echo "no rxe-vm harness (vm/run-in-rxe-vm.sh); set RXE_VM_SCRIPT" >&2; exit 2; }

cd "$ROOT"
# one reactor run, so that rds-api, rds-core and transport-tcp come from this tree's target/classes, never
# from a stale snapshot in ~/.m2 (the last module written, transport-ib, leaves its classpath in the file)
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  mvn -B -q -o -pl transport-ib -am test-compile dependency:build-classpath \
    -Dmdep.outputFile="$MODULE/target/ib-vm.classpath" >/dev/null
fi
CP="$MODULE/target/test-classes:$MODULE/target/classes:$(cat "$MODULE/target/ib-vm.classpath")"
JAVA=$(readlink -f "$(command -v java)")

mkdir -p "$MODULE/target/ib-vm"
cd "$MODULE/target/ib-vm"   # the guest may write only here
rm -f hs_err_pid*.log
start=$(date +%s.%N)
set +e
RXE_VM_TIMEOUT=${RXE_VM_TIMEOUT:-600} "$HARNESS" "set -e
ip addr add 10.77.0.2/24 dev eth0
echo guest: \$(uname -r), \$(rdma link show | head -1)
rc=0
if [ '$COUNT' != 0 ]; then
  /usr/bin/time -f 'guest java (smoke): %e s wall, %M KiB max RSS' '$JAVA' -XX:TieredStopAtLevel=1 ${RDS4J_IB_JAVA_OPTS:-} -cp '$CP' \
    org.rds4j.transport.ib.verbs.VerbsSmoke 10.77.0.1 10.77.0.2 $COUNT || rc=1
fi
if [ '${IB_TESTS:-1}' != 0 ]; then
  /usr/bin/time -f 'guest java (stack tests): %e s wall, %M KiB max RSS' '$JAVA' ${RDS4J_IB_JAVA_OPTS:-} \
    -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp '$CP' \
    org.rds4j.transport.ib.IbStackTests 10.77.0.1 10.77.0.2 $CASES || rc=1
fi
if [ '${IB_BENCH:-0}' = 1 ]; then
  sh '$HERE/ib-bench-guest.sh' '$JAVA' '$CP' || rc=1
fi
exit \$rc" 2>&1 | tee smoke.log
rc=${PIPESTATUS[0]}
set -e
# a JVM crash in the guest: its report stays in target/ib-vm; show the part that names the fault in the log
for report in hs_err_pid*.log; do
  [ -f "$report" ] || continue
  echo "=== $report (JVM crash report, up to the process section)"
  sed -n '1,/P R O C E S S/p' "$report" | head -200
done | tee -a smoke.log
echo "run-ib-tests: exit $rc, $(echo "$(date +%s.%N) - $start" | bc) s including the VM boot" | tee -a smoke.log
if [ "${RDS4J_RECORD:-}" = 1 ]; then
  record=$(JAVA=$JAVA "$ROOT/results/new-run.sh" ib-tests) && cp smoke.log "$record/" && echo "run-ib-tests: recorded in $record"
fi
exit "$rc"
