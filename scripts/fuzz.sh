#!/usr/bin/env bash
# Builds the libFuzzer harnesses in Fuzz/ (with AddressSanitizer) and runs each for a
# given time, two at a time on the machine's cores. Corpora grow under .build/fuzz/corpus,
# crash inputs land in .build/fuzz/artifacts, and each harness's log ends with its
# executions and coverage. Exits non-zero if any harness found a crash, leak or timeout.
#
#   scripts/fuzz.sh [SECONDS_PER_HARNESS] [HARNESS...]       (default 600 s, all harnesses)
#
# A crash input reproduces with: Fuzz/.build/debug/<harness> <file>
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-600}"
shift || true
all=(fuzz-cbor fuzz-authenticator-data fuzz-webauthn-json fuzz-jws fuzz-jwks fuzz-links fuzz-transfer-code fuzz-vault-record fuzz-provider-bodies)
harnesses=("${@:-${all[@]}}")
[ ${#harnesses[@]} -eq 0 ] && harnesses=("${all[@]}")
jobs="${FUZZ_JOBS:-$(nproc)}"

work=.build/fuzz
mkdir -p "$work/corpus" "$work/artifacts" "$work/logs"
python3 scripts/fuzz_seeds.py Vectors "$work/seeds"

# -sanitize=fuzzer alone leaves Swift code without coverage counters here; ask for
# them (inline 8-bit counters, as libFuzzer wants, and comparison tracing).
(cd Fuzz && swift build --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp 2>&1 | grep -vE "ld.gold: warning: Cannot export local symbol" | tail -2)

run() {
    local harness="$1"
    mkdir -p "$work/corpus/$harness"
    # -rss_limit_mb bounds memory (a leak or a huge allocation is a finding);
    # -timeout makes a hang (over 10 s on one input) a finding.
    # Swift's own backtracer would race ASan's report; libFuzzer prints the stack.
    if SWIFT_BACKTRACE=enable=no Fuzz/.build/debug/"$harness" "$work/corpus/$harness" "$work/seeds/$harness" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$work/artifacts/$harness-" > "$work/logs/$harness.log" 2>&1; then
        echo "ok     $harness  $(grep -E '^#[0-9]+.*DONE' "$work/logs/$harness.log" | tail -1)"
    else
        echo "FAILED $harness  (see $work/logs/$harness.log)"
        return 1
    fi
}

status=0
pids=()
for harness in "${harnesses[@]}"; do
    run "$harness" &
    pids+=($!)
    if [ ${#pids[@]} -ge "$jobs" ]; then
        wait "${pids[0]}" || status=1
        pids=("${pids[@]:1}")
    fi
done
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
exit $status
