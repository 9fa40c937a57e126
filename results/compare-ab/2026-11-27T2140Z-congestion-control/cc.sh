#!/bin/bash
# cc.sh OUT PAIRS "CASES" "SYSTEMS": runs each case and system under bbr then cubic (the host's TCP congestion
# control, net.ipv4.tcp_congestion_control), alternated PAIRS times; restores bbr; prints one line per run
OUT=$1; PAIRS=$2; CASES=$3; SYSTEMS=$4; mkdir -p $OUT
for p in $(seq $PAIRS); do for c in $CASES; do for cc in bbr cubic; do for s in $SYSTEMS; do
  sysctl -qw net.ipv4.tcp_congestion_control=$cc
  /work/main/compare/run.sh --reps 1 --systems $s --cases $c --no-docs --out $OUT/$p-$c-$cc-$s >/dev/null 2>&1
  echo "$p $c $cc $s $(grep -E '^\| (rds4j|raw)' $OUT/$p-$c-$cc-$s/table.md | head -1 | cut -d'|' -f4-7)"
done; done; done; done
sysctl -qw net.ipv4.tcp_congestion_control=bbr
