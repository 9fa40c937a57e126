#!/usr/bin/env bash
# Runs the verbs-level smoke test (VerbsSmoke) in a qemu guest with Soft-RoCE (rxe0 on a dummy eth0).
# Builds transport-ib and its test classes on the host (offline Maven), then boots the guest with the
# rxe-vm harness and runs plain `java -cp` there (Maven cannot run in the guest). Exit status: the test's.
#   transport-ib/src/test/vm/run-ib-tests.sh [messages-each-way]      (default 4000)
# Extra JVM options: RDS4J_IB_JAVA_OPTS (e.g. -Drds4j.ib.opsCall=jna). SKIP_BUILD=1 skips the host build.
# Harness: $RXE_VM_SCRIPT, else vm/run-in-rxe-vm.sh at the repo root, else /work/shared/tools/rxe-vm/.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
MODULE=$(cd "$HERE/../../.." && pwd)
ROOT=$(cd "$MODULE/.." && pwd)
COUNT=${1:-4000}
HARNESS=${RXE_VM_SCRIPT:-}
if [ -z "$HARNESS" ]; then
  for h in "$ROOT/vm/run-in-rxe-vm.sh" /work/shared/tools/rxe-vm/run-in-rxe-vm.sh; do
    [ -x "$h" ] && { HARNESS=$h; break; }
  done
fi
[ -n "$HARNESS" ] || { echo "no rxe-vm harness (vm/run-in-rxe-vm.sh); set RXE_VM_SCRIPT" >&2; exit 2; }

cd "$ROOT"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  mvn -B -q -o -pl transport-ib -am test-compile
fi
mvn -B -q -o -pl transport-ib dependency:build-classpath -Dmdep.outputFile="$MODULE/target/ib-vm.classpath" >/dev/null
CP="$MODULE/target/test-classes:$MODULE/target/classes:$(cat "$MODULE/target/ib-vm.classpath")"
JAVA=$(readlink -f "$(command -v java)")

mkdir -p "$MODULE/target/ib-vm"
cd "$MODULE/target/ib-vm"   # the guest may write only here
start=$(date +%s.%N)
set +e
RXE_VM_TIMEOUT=${RXE_VM_TIMEOUT:-400} "$HARNESS" "set -e
ip addr add 10.77.0.2/24 dev eth0
echo guest: \$(uname -r), \$(rdma link show | head -1)
/usr/bin/time -f 'guest java: %e s wall, %M KiB max RSS' '$JAVA' -XX:TieredStopAtLevel=1 ${RDS4J_IB_JAVA_OPTS:-} -cp '$CP' \
  org.rds4j.transport.ib.verbs.VerbsSmoke 10.77.0.1 10.77.0.2 $COUNT" 2>&1 | tee smoke.log
rc=${PIPESTATUS[0]}
set -e
echo "run-ib-tests: exit $rc, $(echo "$(date +%s.%N) - $start" | bc) s including the VM boot" | tee -a smoke.log
exit "$rc"
