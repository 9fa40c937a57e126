#!/bin/bash
# kernel-interop-test.sh - an rds4j node and a Linux kernel RDS node (rds_tcp, AF_RDS sockets from Python)
# exchange messages over TCP in the qemu guest of vm/run-in-rxe-vm.sh (Debian 6.1 kernel). A first check of
# wire compatibility, not the whole interoperability suite: kernel -> rds4j -> kernel echoes of 0..64 KiB in
# order, kernel pings answered by rds4j, rds4j pings answered by the kernel, and the handshake completed with
# the kernel's probe. Needs root and nftables on the host (the guest uses the host's userspace).
#
# The full run (without --smoke) fails today, in its echo checks. The kernel's rds_tcp sends no RDS acks (it counts bytes
# acked by TCP as delivered), so the rds4j echo's send buffer fills with messages it never sees acked, the
# echo stops reading, its port becomes congested and the kernel sender waits forever. rds4j must apply the
# kernel's rule to such peers (the interoperability issue).
#   usage: vm/kernel-interop-test.sh [--smoke]      (builds samples/target/rds.jar if missing)
# --smoke echoes 20 messages instead of 200: few enough to fit in one rds4j send buffer, so it checks the
# wire (framing, handshake, pings, sizes up to 19 KiB, order) without the missing delivery rule below; CI runs
# that. Results: samples/target/kernel-interop/. Exit status 0 only if every check passed.
set -uo pipefail
COUNT=200
[ "${1:-}" = "--smoke" ] && COUNT=20
ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
JAR=$ROOT/samples/target/rds.jar
[ -f "$JAR" ] || (cd "$ROOT" && mvn -B -q -ntp -pl samples -am package -DskipTests) || { echo "FAIL: build"; exit 1; }
command -v nft >/dev/null || { echo "FAIL: nft (nftables) is not installed on the host; the guest uses it"; exit 1; }
if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then JAVA=$JAVA_HOME/bin/java; else JAVA=$(command -v java); fi
JAVA=$(readlink -f "$JAVA")
DIR=$ROOT/samples/target/kernel-interop
rm -rf "$DIR"; mkdir -p "$DIR"
cp "$ROOT"/vm/kernel-interop/* "$DIR"/
cd "$ROOT"
RXE_VM_RW=$DIR RXE_VM_TIMEOUT=${KERNEL_INTEROP_VM_TIMEOUT:-600} "$ROOT/vm/run-in-rxe-vm.sh" \
  "bash '$DIR/guest.sh' '$JAVA' '$JAR' '$DIR' $COUNT" 2>&1 | tee "$DIR/run.log"
rc=${PIPESTATUS[0]}
echo "kernel-interop-test: $(grep -c '^PASS' "$DIR/run.log") passed, $(grep -c '^FAIL' "$DIR/run.log") failed"
[ "$rc" -eq 0 ] && ! grep -q '^FAIL' "$DIR/run.log"
