#!/usr/bin/env bash
# Fuzz every decoder mtuperf exposes to the network, to users or to the kernel's
# replies (error queue, netlink) for a bounded time.
# Exits non-zero when a target crashes (the reproducer is left in fuzz/artifacts/).
# cargo-fuzz wants nightly; RUSTC_BOOTSTRAP=1 lets a stable toolchain accept its flags.
# Usage: .ci/fuzz.sh [SECONDS_PER_TARGET]   (default 20)
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
secs="${1:-${FUZZ_SECONDS:-20}}"
export RUSTC_BOOTSTRAP=1
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi
targets=(codec_agent codec_client codec_authenticated dgram_header key_file units errqueue netlink)
cargo fuzz build
failed=()
for t in "${targets[@]}"; do
    echo "== fuzz $t for ${secs}s"
    mkdir -p "corpus/$t"
    # Start from valid inputs (a real Hello frame, datagram headers, a key file,
    # unit strings) so the fuzzer explores past the first checks.
    if [ -d "seeds/$t" ]; then cp -n seeds/"$t"/* "corpus/$t/" 2>/dev/null || true; fi
    if ! cargo fuzz run "$t" "corpus/$t" -- -max_total_time="$secs" -max_len=70000 \
        -rss_limit_mb=2048 -print_final_stats=1 2>"/tmp/mtuperf-fuzz-$t.log"; then
        tail -n 40 "/tmp/mtuperf-fuzz-$t.log"
        failed+=("$t")
    else
        grep -E "^(#[0-9]+.*DONE|stat::number_of_executed_units)" "/tmp/mtuperf-fuzz-$t.log" | tail -n 2 || true
    fi
done
if ((${#failed[@]})); then
    echo "fuzz: crashes in: ${failed[*]} (reproducers in fuzz/artifacts/)" >&2
    exit 1
fi
echo "fuzz: all ${#targets[@]} targets ran ${secs}s each without a crash"
