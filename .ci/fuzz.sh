#!/usr/bin/env bash
# Fuzz every decoder mtuperf exposes to the network, to users or to the kernel's
# replies (error queue, netlink) for a bounded time.
# Exits non-zero when a target crashes (the reproducer is left in fuzz/artifacts/).
#
# The targets are libFuzzer binaries (libfuzzer-sys). They are built here with plain
# `cargo build` and the coverage instrumentation cargo-fuzz would pass, instead of
# through cargo-fuzz itself: installing cargo-fuzz from source cost CI 2-3 minutes on
# every clean machine. No AddressSanitizer (cargo-fuzz's default): every decoder is
# safe Rust (`unsafe` lives only in mtuperf-sys's socket wrappers, which the targets
# never call), so a crash is a panic, an abort or a timeout, which libFuzzer catches
# without it. Targets run side by side, one per CPU.
#
# One input running over 60 s is a hang (an input takes microseconds; the margin is for
# CI, where the fuzzers run at nice 19 beside the tests and can wait seconds for a CPU).
#
# Usage: .ci/fuzz.sh [SECONDS_PER_TARGET]   (default 10; FUZZ_SECONDS too)
#        FUZZ_STEP=build .ci/fuzz.sh         (only build the targets; FUZZ_STEP=run only runs)
#        FUZZ_PROFILE=dev .ci/fuzz.sh        (unoptimised targets: a faster build, slower runs)
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
secs="${1:-${FUZZ_SECONDS:-10}}"
targets=(codec_agent codec_client codec_authenticated dgram_header key_file units errqueue netlink)

# What `cargo fuzz build` passes to rustc (cargo-fuzz 0.13, without -Zsanitizer).
export RUSTFLAGS="--cfg fuzzing -Cpasses=sancov-module \
 -Cllvm-args=-sanitizer-coverage-level=4 \
 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
 -Cllvm-args=-sanitizer-coverage-pc-table \
 -Cllvm-args=-sanitizer-coverage-trace-compares \
 -Cdebug-assertions -Coverflow-checks"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
# No debug info (the fuzz profile keeps line tables for reading a crash by hand:
# `cargo build --release` in fuzz/ without this script): a third of the build time.
export CARGO_PROFILE_RELEASE_DEBUG=0 CARGO_PROFILE_DEV_DEBUG=0
# FUZZ_PROFILE=dev builds the targets unoptimised: 113 s of CPU instead of 173 s, for
# about a sixth of the inputs per second (codec_agent: 52k in 5 s against 307k). CI
# uses it: its fuzzing is a bounded smoke run beside the tests, where the build is
# most of the cost. Longer runs by hand keep the default, release.
profile="${FUZZ_PROFILE:-release}"
case "$profile" in
    release) build_flags=(--release); dir=release ;;
    dev) build_flags=(); dir=debug ;;
    *) echo "fuzz.sh: FUZZ_PROFILE=$profile: expected release or dev" >&2; exit 2 ;;
esac
# An explicit --target keeps RUSTFLAGS off build scripts and proc macros (they would
# need libFuzzer's coverage callbacks to link), as cargo-fuzz does.
host=$(rustc -vV | sed -n 's/^host: //p')
step="${FUZZ_STEP:-all}"
if [ "$step" != run ]; then
    cargo build "${build_flags[@]}" --quiet --bins --target "$host"
fi
[ "$step" = build ] && exit 0
bin="$CARGO_TARGET_DIR/$host/$dir"

jobs=$(nproc 2>/dev/null || echo 2)
failed=()
run_one() {
    local t=$1
    mkdir -p "corpus/$t" "artifacts/$t"
    # Start from valid inputs (a real Hello frame, datagram headers, a key file,
    # unit strings) so the fuzzer explores past the first checks.
    if [ -d "seeds/$t" ]; then cp -n seeds/"$t"/* "corpus/$t/" 2>/dev/null || true; fi
    set +e
    "$bin/$t" "corpus/$t" -max_total_time="$secs" -max_len=70000 -rss_limit_mb=2048 \
        -timeout=60 -print_final_stats=1 -artifact_prefix="artifacts/$t/" \
        >"/tmp/mtuperf-fuzz-$t.log" 2>&1
    echo $? >"/tmp/mtuperf-fuzz-$t.rc"
}
for t in "${targets[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
    echo "== fuzz $t for ${secs}s"
    rm -f "/tmp/mtuperf-fuzz-$t.rc"
    run_one "$t" &
done
wait
for t in "${targets[@]}"; do
    if [ "$(cat "/tmp/mtuperf-fuzz-$t.rc" 2>/dev/null)" = 0 ]; then
        grep -E "^stat::number_of_executed_units" "/tmp/mtuperf-fuzz-$t.log" | sed "s/^/$t: /" || true
    else
        tail -n 40 "/tmp/mtuperf-fuzz-$t.log"
        failed+=("$t")
    fi
done
if ((${#failed[@]})); then
    echo "fuzz: crashes in: ${failed[*]} (reproducers in fuzz/artifacts/)" >&2
    exit 1
fi
echo "fuzz: all ${#targets[@]} targets ran ${secs}s each without a crash"
