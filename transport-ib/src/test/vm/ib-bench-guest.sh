#!/bin/sh
# Guest side of the figures in docs/transport-ib.md (run by IB_BENCH=1 run-ib-tests.sh, inside the rxe guest
# with 10.77.0.1 and 10.77.0.2 on eth0): rds4j IB vs rds4j TCP (IbBench), then ibv_rc_pingpong and perftest
# (ib_send_lat / ib_send_bw over rdma_cm) on the same rxe device, when installed on the host.
#   ib-bench-guest.sh <java> <classpath>
JAVA=$1
CP=$2
rc=0
echo "== rds4j (IbBench)"
"$JAVA" -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$CP" org.rds4j.transport.ib.IbBench 10.77.0.1 10.77.0.2 || rc=1
if command -v ibv_rc_pingpong >/dev/null 2>&1; then
  for size in 64 4096 65536; do
    echo "== ibv_rc_pingpong -s $size (iters 2000; its figure is a round trip per iteration)"
    ibv_rc_pingpong -d rxe0 -g 1 -s $size -n 2000 >/tmp/pp-server.log 2>&1 &
    sleep 1
    ibv_rc_pingpong -d rxe0 -g 1 -s $size -n 2000 10.77.0.1 2>&1 | grep -E "bytes in|iters in" || rc=1
    wait
  done
fi
if command -v ib_send_lat >/dev/null 2>&1; then
  echo "== ib_send_lat -R -s 64"
  ib_send_lat -d rxe0 -R -F -s 64 -n 2000 >/tmp/lat-server.log 2>&1 &
  sleep 1
  ib_send_lat -d rxe0 -R -F -s 64 -n 2000 10.77.0.1 2>&1 | tail -4
  wait
  for size in 4096 65536; do
    echo "== ib_send_bw -R -s $size"
    ib_send_bw -d rxe0 -R -F -s $size -n 2000 >/tmp/bw-server.log 2>&1 &
    sleep 1
    ib_send_bw -d rxe0 -R -F -s $size -n 2000 10.77.0.1 2>&1 | tail -4
    wait
  done
else
  echo "perftest not installed on the host (apt-get install perftest): ib_send_lat/ib_send_bw skipped"
fi
exit $rc
