#!/usr/bin/env bash
# The rds4j comparison suite: rds4j over TCP vs raw Java NIO TCP, Aeron UDP and JGroups TCP, on loopback.
#
#   compare/run.sh [--quick] [--reps N] [--cases "rtt tput64 tput1k fanout scale16 scale64 scale200"]
#                  [--systems "rds4j rds4j-backoff rds4j-invoker rds4j-driver rds4j-send rds4j-recv nio aeron aeron-mtu64k
#                              aeron-invoker jgroups jgroups-nodrop"]
#                  [--out DIR] [--no-docs] [--record]
#
# This script builds nothing. It runs compare/target/compare.jar, which you build with
#     mvn -q -o package -DskipTests -pl compare -am
# (it runs that command itself only when the jar is missing; after changing code, rebuild first).
#
# Cases: rtt (64 B ping-pong), tput64 and tput1k (one-way throughput, 64 B and 1 KiB), fanout (one socket to 16
# receivers on one address), and, not run by default, scale16, scale64 and scale200: one socket to 16, 64 or 200
# peer addresses (127.0.2.1 ...), 64 B messages, each process reporting its RSS and direct memory; only rds4j's
# rows and nio take part (Aeron and JGroups are skipped with a note). The default is "rtt tput64 tput1k fanout".
#
# Every run is a fresh pair of JVMs (one per node; the fan-out receiver process holds 16 receivers). Runs are
# interleaved: for each repetition, for each case, every system in turn (A B C D A B C D ...), so slow drift in
# the machine's load hits all systems alike. Each run appends one JSON line to DIR/results.jsonl (DIR: --out,
# default compare/target/results-<time>); at the end the table of medians (min-max) is printed, saved as
# DIR/table.md and written into docs/benchmarks.md between <!-- results:begin --> and <!-- results:end -->.
# --record also copies results.jsonl, meta.md and table.md (not the per-run logs) into a new folder
# results/compare/<date>-<commit>/ made by results/new-run.sh, to be committed with the docs that cite it.
#
# Defaults: 3 repetitions; throughput 2 s warm-up + 5 s measured; RTT a warm-up of 20k round trips and 4 s,
# whichever ends later, + 100k measured round trips (a full run takes about 20 minutes). --quick: 1 repetition,
# 1 s + 2 s, 10k round trips and 1 s + 20k (~4 min).
#
# Systems: rds4j (driven like Aeron: polling application thread, agent idling with yield), rds4j-backoff
# (rds4j as shipped: blocking send/receive, the stack's default backoff idle strategy), rds4j-driver (the same,
# each process attached to a driver it starts as a child, whose CPU time it counts as its own), rds4j-invoker (no agent
# thread: Threading.INVOKER, the polling application thread runs the stack's duty cycle with stack.invoke()),
# rds4j-send and rds4j-recv (not run by default; throughput cases only: each side of rds4j as shipped alone,
# against an ideal RDS peer, compare's "wire" system: rds4j's source into an ideal receiver, an ideal sender into
# rds4j's sink; a pair is as fast as its slower side, and these say which side that is), nio; each peer as shipped
# and tuned for loopback: aeron (Aeron's 1408-byte MTU), aeron-mtu64k (MTU 65504),
# aeron-invoker (MTU 65504, no driver thread: ThreadingMode.INVOKER, the polling application thread runs the
# driver, the peer of rds4j-invoker), jgroups (its default transfer-queue bundler, which drops a message when
# its queue is full) and jgroups-nodrop (the per-destination bundler, which blocks the sender instead).
#
# Environment: JAVA (default java), JAVA_OPTS (replaces the JVM options below), RDS4J_OPTS,
# RDS4J_BACKOFF_OPTS, RDS4J_INVOKER_OPTS, NIO_OPTS, NIO_RTT_OPTS, AERON_OPTS, AERON_MTU64K_OPTS,
# AERON_INVOKER_OPTS, JGROUPS_OPTS, JGROUPS_NODROP_OPTS (replace a system's options below; any
# <SYSTEM>_RTT_OPTS, e.g. RDS4J_RTT_OPTS, replaces that system's options for the rtt case only).
#
# Only 127.0.0.x addresses (and 127.0.2.x in the scale cases) and ports 20000-24099 are used. Every process has
# its own watchdog (--timeout); the script terminates whatever it started when it exits (Ctrl-C, or
# kill -TERM <pid of run.sh>).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
JAR=$HERE/target/compare.jar
JAVA=${JAVA:-java}

REPS=3
WARMUP=2
DURATION=5
WARMUP_RT=20000
# the round trips measured take under a second, so what the JIT compiler still does then shows in their tail:
# with 2 s of warm-up, rds4j's 64 B p99 was 118 us in 1 of 3 runs (10-28 us in the others), with 4 s 23-32 us
RTT_WARMUP=4
RT=100000
# rds4j-driver's two drivers start with each run, but a deployed driver is a long-lived process, warm before an
# application attaches. Fresh, each compiled through its first 10 s while the six busy threads held both cores (C2's
# threads 30 % of a core in each driver at 6-9 s): 64 B one-way 2.2-2.8M msgs/s after 2 s against 3.0-3.3M after 5-15,
# 1 KiB 0.67-0.74M against 1.18-1.30M after 8, round trip p50 36-39 us after 4 s against 28-29 after ~9; the embedded
# rows did not move (64 B 7.2-8.3M either way). So that row warms up for this long in every case.
DRIVER_WARMUP=10
KNOWN_SYSTEMS="rds4j rds4j-backoff rds4j-invoker rds4j-driver rds4j-send rds4j-recv nio aeron aeron-mtu64k aeron-invoker jgroups jgroups-nodrop"
# rds4j-send and rds4j-recv diagnose rather than compare: not in a default run, which stays near 20 minutes
SYSTEMS=$(tr ' ' '\n' <<<"$KNOWN_SYSTEMS" | grep -vx -e rds4j-send -e rds4j-recv | xargs)
CASES="rtt tput64 tput1k fanout"
OUT=""
DOCS=1
QUICK=0
RECORD=0
COMMAND="compare/run.sh $*"

while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1; REPS=1; WARMUP=1; RTT_WARMUP=1; DRIVER_WARMUP=5; DURATION=2; WARMUP_RT=10000; RT=20000 ;;
    --reps) REPS=$2; shift ;;
    --systems) SYSTEMS=$2; shift ;;
    --cases) CASES=$2; shift ;;
    --out) OUT=$2; shift ;;
    --no-docs) DOCS=0 ;;
    --record) RECORD=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
  shift
done
for system in $SYSTEMS; do
  case " $KNOWN_SYSTEMS " in
    *" $system "*) ;;
    *) echo "run.sh: unknown system $system (known: $KNOWN_SYSTEMS)" >&2; exit 2 ;;
  esac
done
for bench in $CASES; do
  case "$bench" in
    rtt|tput64|tput1k|fanout) ;;
    scale*)
      n=${bench#scale}
      if ! [[ "$n" =~ ^[1-9][0-9]*$ ]] || [ "$n" -gt 254 ]; then
        echo "run.sh: unknown case $bench (scale cases: scale<N>, N peers from 1 to 254, e.g. scale16 scale64 scale200)" >&2
        exit 2
      fi ;;
    *) echo "run.sh: unknown case $bench" >&2; exit 2 ;;
  esac
done

# JVM options, the same for every system and role. The --add-opens are for Aeron and agrona, which reach into
# JDK internals (NIO selector, Unsafe) where allowed; they change nothing for the others.
JAVA_OPTS=${JAVA_OPTS:-"-Xms512m -Xmx512m -XX:+UseG1GC -Djava.net.preferIPv4Stack=true \
--add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED \
--add-opens java.base/jdk.internal.misc=ALL-UNNAMED -Dorg.slf4j.simpleLogger.defaultLogLevel=info"}

# Per-system settings (see docs/benchmarks.md, "How each system is driven"): chosen as the fastest settings
# that are fair on a 2-core machine, where every spinning thread takes a core from another. rds4j and Aeron
# are driven alike: the application thread polls and yields when idle, the background thread (rds4j's agent,
# Aeron's SHARED driver) yields when idle. rds4j-backoff is rds4j as shipped: blocking calls, backoff agent.
# rds4j-invoker has no agent thread: the same polling, yielding application thread also runs the stack's
# duty cycle (stack.invoke() in its loop); --agent-idle only applies to its blocking handshake calls.
# Raw NIO is the ceiling, so it gets its best mode per case: polling for ping-pong, blocking channels for
# throughput (steadier, and as fast or faster). <SYSTEM>_RTT_OPTS, when set, replaces <SYSTEM>_OPTS for rtt.
# The peers run as shipped and tuned for this link. Aeron with the largest MTU it takes, 65504 bytes, as
# loopback carries 64 KiB datagrams; the terms (16 MiB, 4 MiB in fan-out), receiver windows and socket buffers
# (2 MiB) stay as they are, as they meet the driver's rules for it (MTU <= term length / 8, <= receiver window,
# <= socket buffers); with its SHARED driver thread or in INVOKER mode. JGroups with a bundler that blocks the
# sender when its queue is full instead of dropping the message.
RDS4J_OPTS=${RDS4J_OPTS:-"--io poll --idle yield --agent-idle yield"}
RDS4J_BACKOFF_OPTS=${RDS4J_BACKOFF_OPTS:-"--io block --agent-idle backoff --idle yield"}
RDS4J_INVOKER_OPTS=${RDS4J_INVOKER_OPTS:-"--threading invoker --io poll --idle yield --agent-idle backoff"}
RDS4J_DRIVER_OPTS=${RDS4J_DRIVER_OPTS:-"$RDS4J_BACKOFF_OPTS --driver"}
NIO_OPTS=${NIO_OPTS:-"--io block"}
NIO_RTT_OPTS=${NIO_RTT_OPTS:-"--io poll --idle yield"}
AERON_OPTS=${AERON_OPTS:-"--threading shared --driver-idle yield --idle yield"}
AERON_MTU64K_OPTS=${AERON_MTU64K_OPTS:-"--threading shared --driver-idle yield --idle yield --mtu 65504"}
AERON_INVOKER_OPTS=${AERON_INVOKER_OPTS:-"--threading invoker --idle yield --mtu 65504"}
JGROUPS_OPTS=${JGROUPS_OPTS:-""}
JGROUPS_NODROP_OPTS=${JGROUPS_NODROP_OPTS:-"--bundler per-destination"}

if [ ! -f "$JAR" ]; then
  echo "run.sh: $JAR is missing; building it: (cd $ROOT && mvn -q -o package -DskipTests -pl compare -am)" >&2
  (cd "$ROOT" && mvn -q -o package -DskipTests -pl compare -am)
fi

if [ -z "$OUT" ]; then
  OUT=$HERE/target/results-$(date -u +%Y%m%d-%H%M%S)
fi
mkdir -p "$OUT/runs"
RESULTS=$OUT/results.jsonl
: > "$RESULTS"
RECORD_DIR=""
if [ "$RECORD" = 1 ]; then
  RECORD_DIR=$(JAVA=$JAVA "$ROOT/results/new-run.sh" compare)
fi

# ---------------------------------------------------------------- child processes

PIDS=()
AERON_BASE=/dev/shm/rds4j-compare-aeron-$$
cleanup() {
  local pid alive=0
  for pid in "${PIDS[@]:-}"; do
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      alive=1
    fi
  done
  [ "$alive" = 1 ] && sleep 1
  for pid in "${PIDS[@]:-}"; do
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill -KILL "$pid" 2>/dev/null || true
    fi
    # a killed rds4j stack leaves its info file (rds info) behind
    [ -n "$pid" ] && rm -f /dev/shm/rds4j-"$(id -un)"/"$pid"-* 2>/dev/null || true
  done
  rm -rf "$AERON_BASE"-* 2>/dev/null || true
}
trap cleanup EXIT
trap 'echo "run.sh: interrupted" >&2; exit 130' INT TERM

# start ROLE_OUT ROLE_ERR ARGS...: starts a JVM in the background; its pid is in $STARTED
start() {
  local out=$1 err=$2
  shift 2
  # shellcheck disable=SC2086
  "$JAVA" $JAVA_OPTS -cp "$JAR" org.rds4j.compare.Main "$@" >"$out" 2>"$err" &
  STARTED=$!
  PIDS+=("$STARTED")
}

# await_exit PID SECONDS: waits for a process to end by itself, then kills it (TERM, then KILL)
# Blocks in wait rather than polling: a shell that forked a sleep every 100 ms during the measured window took
# rds4j's 64 B ping-pong p99 from 10-24 us to 114-121 us (NIO's did not move); one sleeping watchdog wakes once.
await_exit() {
  local pid=$1 limit=$2 watchdog
  ( sleep "$limit"; kill -TERM "$pid" 2>/dev/null ) &
  watchdog=$!
  wait "$pid" 2>/dev/null || true
  kill "$watchdog" 2>/dev/null || true
  wait "$watchdog" 2>/dev/null || true
  stop "$pid"
}

# stop PID: TERM, a second to go, then KILL; reaps it
stop() {
  local pid=$1 i
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 1 20); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

# await_ready FILE PID SECONDS: waits for the READY line of a passive role
await_ready() {
  local file=$1 pid=$2 limit=$3 waited=0
  while ! grep -q '^READY' "$file" 2>/dev/null; do
    if ! kill -0 "$pid" 2>/dev/null || [ "$waited" -ge $((limit * 20)) ]; then
      return 1
    fi
    sleep 0.05
    waited=$((waited + 1))
  done
}

# system_opts LABEL CASE: the options of a system (a label of KNOWN_SYSTEMS) in a case
system_opts() {
  local var
  var=$(tr 'a-z-' 'A-Z_' <<<"$1")_RTT_OPTS
  if [ "$2" = rtt ] && [ -n "${!var:-}" ]; then
    echo "${!var}"
  else
    case "$1" in
      rds4j) echo "$RDS4J_OPTS" ;;
      rds4j-backoff) echo "$RDS4J_BACKOFF_OPTS" ;;
      rds4j-invoker) echo "$RDS4J_INVOKER_OPTS" ;;
      rds4j-driver) echo "$RDS4J_DRIVER_OPTS" ;;
      rds4j-send|rds4j-recv) echo "$RDS4J_BACKOFF_OPTS" ;;
      nio) echo "$NIO_OPTS" ;;
      aeron) echo "$AERON_OPTS" ;;
      aeron-mtu64k) echo "$AERON_MTU64K_OPTS" ;;
      aeron-invoker) echo "$AERON_INVOKER_OPTS" ;;
      jgroups) echo "$JGROUPS_OPTS" ;;
      jgroups-nodrop) echo "$JGROUPS_NODROP_OPTS" ;;
    esac
  fi
  # every Aeron driver directory is under $AERON_BASE, which cleanup removes
  case "$1" in aeron*) echo "--aeron-dir $AERON_BASE" ;; esac
}

# ---------------------------------------------------------------- one run

RUN=0
# handoff: ns to move a cache line between the CPUs. On a VM it changes with the host's placement of the vCPUs, and
# with it whole stretches of runs (HandOff.java), so each run records it before and after; a run with both above
# FAR_NS ran with the vCPUs apart
FAR_NS=150
handoff() {
  "$JAVA" -cp "$JAR" org.rds4j.compare.Main handoff 2>/dev/null | sed -n 's/^HANDOFF //p'
}
handoff_summary() {
  # shellcheck disable=SC2086
  printf '%s\n' $HANDOFFS | sort -n | awk -v far="$FAR_RUNS" -v runs="$RUN" -v limit="$FAR_NS" \
    '{ v[NR] = $1 } END { if (NR == 0) { print "not measured"; exit }
      printf "%.1f-%.1f ns, median %.1f; %d of %d runs with both above %d ns (the vCPUs apart)\n",
        v[1], v[NR], v[int((NR + 1) / 2)], far, runs, limit }'
}

run_one() {
  local rep=$1 bench=$2 label=$3
  local system=${label%%-*}
  # one side of rds4j alone: the other process is compare's ideal RDS peer (WireBench), which takes the same options
  local psys=$system asys=$system
  case "$label" in
    rds4j-send) psys=wire ;;
    rds4j-recv) asys=wire ;;
  esac
  RUN=$((RUN + 1))
  local port=$((20000 + (RUN % 100) * 40))
  local dir=$OUT/runs/$(printf '%03d' "$RUN")-$bench-$label
  mkdir -p "$dir"
  # --grace 1: the source sends on for 1 s after its window, ample as the sink's window ends one message's
  # latency after the source's; each throughput run waits it out (81 of them in a full run)
  local warmup=$WARMUP case_opts passive active measuring tmo
  case "$bench" in
    rtt) warmup=$RTT_WARMUP; case_opts="--size 64 --warmup-rt $WARMUP_RT --rt $RT"; passive=rtt-server; active=rtt-client; measuring=active; tmo=180 ;;
    tput64) case_opts="--size 64"; passive=sink; active=source; measuring=passive ;;
    tput1k) case_opts="--size 1024"; passive=sink; active=source; measuring=passive ;;
    fanout) case_opts="--size 64 --receivers 16"; passive=sink; active=source; measuring=passive ;;
    scale*) case_opts="--size 64 --peers ${bench#scale}"; passive=sink; active=source; measuring=passive ;;
    *) echo "run.sh: unknown case $bench" >&2; exit 2 ;;
  esac
  [ "$label" = rds4j-driver ] && warmup=$DRIVER_WARMUP
  [ "$bench" = rtt ] || tmo=$((warmup + DURATION + 80))
  local common="--port $port --tcp-port $((port + 30)) --warmup $warmup --duration $DURATION --grace 1 --start-timeout 40"
  local sys_opts handoff_before handoff_after
  sys_opts=$(system_opts "$label" "$bench" | tr '\n' ' ')
  handoff_before=$(handoff)
  # shellcheck disable=SC2086
  start "$dir/passive.out" "$dir/passive.err" "$psys-$passive" $common $case_opts $sys_opts --timeout $((tmo + 20))
  local ppid=$STARTED apid=""
  if await_ready "$dir/passive.out" "$ppid" 60; then
    # shellcheck disable=SC2086
    start "$dir/active.out" "$dir/active.err" "$asys-$active" $common $case_opts $sys_opts --timeout "$tmo"
    apid=$STARTED
    if [ "$measuring" = active ]; then
      await_exit "$apid" $((tmo + 5))
      stop "$ppid"
    else
      await_exit "$ppid" $((tmo + 5))
      await_exit "$apid" 6
    fi
  else
    echo "run.sh: $psys-$passive did not get ready; see $dir/passive.err" >&2
    stop "$ppid"
  fi

  handoff_after=$(handoff)
  HANDOFFS="$HANDOFFS $handoff_before $handoff_after"
  if awk -v b="${handoff_before:-0}" -v a="${handoff_after:-0}" -v limit="$FAR_NS" 'BEGIN { exit !(b > limit && a > limit) }'; then
    FAR_RUNS=$((FAR_RUNS + 1))
  fi

  local mfile=$dir/passive.out pfile=$dir/active.out
  if [ "$measuring" = active ]; then mfile=$dir/active.out; pfile=$dir/passive.out; fi
  local res peer key value peer_fields=""
  res=$(grep -m1 '^RESULT ' "$mfile" 2>/dev/null | cut -c8- || true)
  peer=$(grep -m1 '^RESULT ' "$pfile" 2>/dev/null | cut -c8- || true)
  # the other process's CPU time (and its stack agent's) and memory, as peer_<key>
  for key in cpu_s agent_cpu_s rss_kib rss_peak_kib direct_bytes direct_count; do
    value=$(sed -n "s/.*\"$key\":\([-0-9.eE+]*\).*/\1/p" <<<"$peer")
    peer_fields="$peer_fields,\"peer_$key\":${value:-null}"
  done
  if [ -z "$res" ]; then
    res="{\"system\":\"$system\",\"error\":\"no result line (see $dir)\"}"
  fi
  local line="{\"bench\":\"$bench\",\"label\":\"$label\",\"rep\":$rep,\"run\":$RUN,${res#\{}"
  line="${line%\}}$peer_fields,\"handoff_ns_before\":${handoff_before:-null},\"handoff_ns_after\":${handoff_after:-null}}"
  echo "$line" >> "$RESULTS"
  local summary
  summary=$(sed -n -e 's/.*"error":"\([^"]*\)".*/FAILED: \1/p' <<<"$line")
  if [ -z "$summary" ]; then
    if [ "$bench" = rtt ]; then
      summary=$(sed -n 's/.*"p50_us":\([0-9.]*\).*"p90_us":\([0-9.]*\).*"p99_us":\([0-9.]*\).*/p50 \1 us, p90 \2 us, p99 \3 us/p' <<<"$line")
    else
      summary=$(sed -n 's/.*"msgs_per_s":\([0-9.]*\).*"mb_per_s":\([0-9.]*\).*/\1 msgs\/s, \2 MB\/s/p' <<<"$line")
      case "$bench" in
        scale*) summary="$summary$(sed -n 's/.*"rss_kib":\([0-9]*\).*"peer_rss_kib":\([0-9]*\).*/, RSS sink \1 KiB, source \2 KiB/p' <<<"$line")" ;;
      esac
    fi
  fi
  printf '[%3d/%d] rep %d %-7s %-14s %s (hand-off %s / %s ns)\n' "$RUN" "$TOTAL" "$rep" "$bench" "$label" "$summary" \
    "${handoff_before:-?}" "${handoff_after:-?}"
}

# ---------------------------------------------------------------- main

# supports CASE LABEL: whether a system takes part in a case (the scale cases: rds4j's pairs and nio only; one side
# alone: the throughput cases on one address)
supports() {
  case "$2" in rds4j-send|rds4j-recv) case "$1" in tput64|tput1k|fanout) return 0 ;; *) return 1 ;; esac ;; esac
  case "$1" in
    scale*) case "$2" in rds4j|rds4j-*|nio) return 0 ;; *) return 1 ;; esac ;;
  esac
  return 0
}

TOTAL=0
for bench in $CASES; do
  for system in $SYSTEMS; do
    if supports "$bench" "$system"; then
      TOTAL=$((TOTAL + REPS))
    else
      echo "run.sh: $bench: skipping $system (rds4j-send and rds4j-recv run the throughput cases only; the scale cases are implemented for rds4j and nio only)"
    fi
  done
done
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
HANDOFFS=""
FAR_RUNS=0
START_TS=$(date +%s)
echo "run.sh: $TOTAL runs ($REPS repetitions x cases [$CASES] x systems [$SYSTEMS], less those skipped); results in $OUT"
for rep in $(seq 1 "$REPS"); do
  for bench in $CASES; do
    for system in $SYSTEMS; do
      if supports "$bench" "$system"; then
        run_one "$rep" "$bench" "$system"
      fi
    done
  done
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
ELAPSED=$(( $(date +%s) - START_TS ))

CPU_MODEL=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
JAVA_VERSION=$("$JAVA" -version 2>&1 | tr '\n' ';' | sed 's/;$//; s/;/; /g')
{
  echo "Run $(date -u '+%Y-%m-%d %H:%M UTC'), $ELAPSED s, $TOTAL runs ($REPS per case and system$([ "$QUICK" = 1 ] && echo ', --quick: shorter windows, indicative only'))."
  echo
  [ -n "$RECORD_DIR" ] && echo "- raw results: \`${RECORD_DIR#"$ROOT"/}/\` (its name ends with the commit measured)"
  echo "- machine: $(nproc) CPUs, ${CPU_MODEL:-unknown CPU}; kernel $(uname -r); $(free -g | awk '/^Mem:/ {print $2 " GiB RAM"}'); TCP congestion control $(cat /proc/sys/net/ipv4/tcp_congestion_control 2>/dev/null || echo unknown)"
  echo "- java: $JAVA_VERSION"
  echo "- load average (1, 5, 15 min) at start: $LOAD_START; at end: $LOAD_END"
  echo "- a cache line's hand-off between the CPUs (\`handoff\`, before and after each run, in \`results.jsonl\`): $(handoff_summary)"
  echo "- command: \`$COMMAND\`; windows: throughput ${WARMUP} s warm-up + ${DURATION} s measured, RTT ${WARMUP_RT} round trips and ${RTT_WARMUP} s + ${RT} round trips; rds4j-driver warms up for ${DRIVER_WARMUP} s in every case"
  echo "- JVM options: \`$JAVA_OPTS\`"
  echo "- rds4j: \`$RDS4J_OPTS\`; rds4j-backoff, rds4j-send and rds4j-recv: \`$RDS4J_BACKOFF_OPTS\`; rds4j-invoker: \`$RDS4J_INVOKER_OPTS\`; rds4j-driver: \`$RDS4J_DRIVER_OPTS\`; NIO: \`$NIO_OPTS\` (rtt: \`$NIO_RTT_OPTS\`)"
  echo "- Aeron: \`$AERON_OPTS\`; aeron-mtu64k: \`$AERON_MTU64K_OPTS\`; aeron-invoker: \`$AERON_INVOKER_OPTS\`; JGroups: \`${JGROUPS_OPTS:-jgroups-tcp.xml}\`; jgroups-nodrop: \`$JGROUPS_NODROP_OPTS\`"
} > "$OUT/meta.md"

echo
if [ "$DOCS" = 1 ]; then
  "$JAVA" -cp "$JAR" org.rds4j.compare.Main report --results "$RESULTS" --meta "$OUT/meta.md" --docs "$ROOT/docs/benchmarks.md"
else
  "$JAVA" -cp "$JAR" org.rds4j.compare.Main report --results "$RESULTS" --meta "$OUT/meta.md"
fi | tee "$OUT/table.md"
echo "run.sh: done in $ELAPSED s; raw results: $RESULTS; per-run logs: $OUT/runs/"
if [ -n "$RECORD_DIR" ]; then
  cp "$RESULTS" "$OUT/meta.md" "$OUT/table.md" "$RECORD_DIR/"
  echo "run.sh: recorded in ${RECORD_DIR#"$ROOT"/} (results.jsonl, meta.md, table.md; commit it with the docs that cite it)"
fi
