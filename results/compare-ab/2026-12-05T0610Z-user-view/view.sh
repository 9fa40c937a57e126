#!/bin/bash
# view.sh N: N rounds of the user's view: `rds stress` with its defaults (one-way 64 B and 1 KiB, request/reply 64 B;
# ../2026-12-02T1415Z-follower-wakes/stview.sh) beside raw NIO pairs of the suite (nio.sh), in turn
# RDS: the rds.jar to run (default samples/target/rds.jar); compare.jar for NIO: JAR (default compare/target/compare.jar)
D=$(cd "$(dirname "$0")/../2026-12-02T1415Z-follower-wakes" && pwd)
RDS=${RDS:-/work/main/samples/target/rds.jar}
for r in $(seq ${1:-3}); do
  for m in ow64 ow1k rr64; do echo "$r stress $m: $(bash $D/stview.sh $RDS $m)"; done
  echo "$r nio 64: $(bash $D/nio.sh 64)"
  echo "$r nio 1024: $(bash $D/nio.sh 1024)"
done
