#!/usr/bin/env bash
# Benchmark of the test suite itself (not a test): the CPU and wall time of each test of
# one test binary, run one at a time, each in a cgroup of its own so that the agents,
# labs and tools it starts are counted with it. CI is CPU-bound on a 2-CPU machine, so
# this is the list to cut from (BENCHMARKS.md §14). Needs root and cgroup v1's cpuacct
# or cgroup v2.
#
#   cargo test -p mtuperf --test cli --no-run      # prints the binary's path
#   bench/test_cpu.sh target/debug/deps/cli-HASH [FILTER] > /tmp/test-cpu.txt
#   sort -rn /tmp/test-cpu.txt | head -30           # "cpu_s wall_s exit test"
set -euo pipefail
BIN=$(realpath "$1"); FILTER=${2:-}
if [ -d /sys/fs/cgroup/cpuacct ]; then
    CG=/sys/fs/cgroup/cpuacct/mtuperf-test-cpu; mkdir -p "$CG"
    reset() { echo 0 > "$CG/cpuacct.usage"; }
    used_ns() { cat "$CG/cpuacct.usage"; }
else
    CG=/sys/fs/cgroup/mtuperf-test-cpu; mkdir -p "$CG"
    base=0
    reset() { base=$(awk '/^usage_usec/ {print $2 * 1000}' "$CG/cpu.stat"); }
    used_ns() { awk -v b="$base" '/^usage_usec/ {print $2 * 1000 - b}' "$CG/cpu.stat"; }
fi
# Tests read their fixtures relative to the crate, as under cargo.
cd "$(dirname "$0")/../crates/cli"
"$BIN" --list $FILTER 2>/dev/null | sed -n 's/: test$//p' | while read -r t; do
    reset
    s=$(date +%s%N)
    set +e
    sh -c "echo \$\$ > '$CG/cgroup.procs'; exec '$BIN' --exact '$t' --test-threads 1" >/dev/null 2>&1
    rc=$?
    set -e
    e=$(date +%s%N)
    u=$(used_ns)
    awk -v u="$u" -v w="$((e - s))" -v rc="$rc" -v t="$t" \
        'BEGIN { printf "%.2f %.2f %d %s\n", u / 1e9, w / 1e9, rc, t }'
done
