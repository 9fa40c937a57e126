#!/usr/bin/env bash
# new-run.sh SUITE: makes results/SUITE/<UTC date and time>-<commit>/ for one recorded run, writes its
# meta.txt (date, commit, machine, JDK) and prints the folder's path. The suites' scripts call it when
# asked to record (--record, or RDS4J_RECORD=1) and copy their raw output there; see README.md.
set -euo pipefail
suite=${1:?usage: new-run.sh SUITE}
root=$(cd "$(dirname "$0")/.." && pwd -P)
commit=$(git -C "$root" rev-parse --short=10 HEAD 2>/dev/null || echo unknown)
# uncommitted changes to tracked files other than results/ and the docs make the run's commit only an approximation
if [ -n "$(git -C "$root" status --porcelain --untracked-files=no -- . ':!results' ':!*.md' 2>/dev/null)" ]; then
  commit=$commit+dirty
fi
stamp=$(date -u +%Y-%m-%dT%H%MZ)
dir=$root/results/$suite/$stamp-$commit
mkdir -p "$dir"
java=${JAVA:-java}
{
  echo "suite: $suite"
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "commit: $commit ($(git -C "$root" log -1 --format=%s HEAD 2>/dev/null || echo '?'))"
  echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1); $(free -g | awk '/^Mem:/ {print $2 " GiB RAM"}'); kernel $(uname -r); host $(hostname)"
  echo "java: $("$java" -version 2>&1 | head -1)"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$dir/meta.txt"
echo "$dir"
