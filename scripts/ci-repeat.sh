#!/usr/bin/env bash
# Runs .ci/run N times, each in a fresh clone of this repository's HEAD (a cold build, as
# CI has), and reports each run's counts: exit status, tests run, issues recorded (those
# against «unknown» included), the time taken, whatever the run left in /tmp, and any
# process from the clone still running after it. Exits 1 if any run failed or left
# something behind. .ci/run itself stays one run (issue 49).
#
#   scripts/ci-repeat.sh [RUNS] [--same-clone] [--busy N]
#
#   RUNS          how many runs (default 3)
#   --same-clone  clone once and run in it again (warm builds after the first)
#   --busy N      N busy loops beside each run, for a loaded machine
#
# The clones go in one directory under /tmp with ../shared beside them (a link to this
# checkout's ../shared, which holds the Wycheproof vectors), removed at the end. Each run's
# log is copied to .build/ci-repeat/ (ignored by git), and a failing run's lines printed.
set -euo pipefail
top=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
runs=3
same_clone=0
busy=0
while [ $# -gt 0 ]; do
    case "$1" in
        --same-clone) same_clone=1 ;;
        --busy) busy=$2; shift ;;
        [0-9]*) runs=$1 ;;
        *) echo "usage: $0 [RUNS] [--same-clone] [--busy N]" >&2; exit 2 ;;
    esac
    shift
done

work=$(mktemp -d /tmp/latchkey-ci-repeat.XXXXXX)
busy_pids=()
cleanup() {
    for pid in "${busy_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
[ -d "$top/../shared" ] && ln -s "$(cd "$top/../shared" && pwd)" "$work/shared"

tmp_listing() { ls -A /tmp | grep -v -e "^$(basename "$work")\$" | sort; }

# What a run left running: any process whose command line names the clone (a provider the
# tests built and started, a helper script from Tests/), which a test's missed stop would
# leave behind with init as its parent. Listed as "PID command", then stopped by PID.
left_running() { pgrep -af -- "$1/" || true; }
stop_left() {
    local pids
    pids=$(echo "$1" | awk '{ print $1 }')
    [ -n "$pids" ] || return 0
    kill $pids 2>/dev/null || true
    sleep 5
    kill -9 $pids 2>/dev/null || true
}

failed=0
printf '%-4s %-6s %-8s %-7s %-8s %-8s %s\n' run exit tests issues unknown seconds "left in /tmp"
for run in $(seq "$runs"); do
    clone="$work/clone-$run"
    if [ "$same_clone" = 1 ] && [ "$run" -gt 1 ]; then clone="$work/clone-1"; fi
    [ -d "$clone" ] || git clone -q "$top" "$clone"
    before=$(tmp_listing)
    for _ in $(seq "$busy"); do (while :; do :; done) & busy_pids+=($!); done
    log="$work/run-$run.log"
    started=$(date +%s)
    status=0
    (cd "$clone" && CI=true bash .ci/run </dev/null >"$log" 2>&1) || status=$?
    seconds=$(( $(date +%s) - started ))
    mkdir -p "$top/.build/ci-repeat" && cp "$log" "$top/.build/ci-repeat/run-$run.log"
    for pid in "${busy_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    busy_pids=()
    left=$(comm -13 <(echo "$before") <(tmp_listing) | { grep -v -e '\.lock$' || true; } | tr '\n' ' ')
    running=$(left_running "$clone")
    # Swift Testing's closing line, e.g. "✔ Test run with 371 tests in 84 suites passed after …"
    # or "✘ Test run with 371 tests in 84 suites failed after … with 3 issues."
    closing=$(grep -a -E 'Test run with [0-9]+ tests?' "$log" | tail -n 1 || true)
    tests=$(echo "$closing" | sed -nE 's/.*Test run with ([0-9]+) tests?.*/\1/p')
    issues=$(echo "$closing" | sed -nE 's/.* with ([0-9]+) issues?.*/\1/p')
    unknown=$(grep -a -E 'unknown' "$log" | grep -a -c 'recorded an issue' || true)
    printf '%-4s %-6s %-8s %-7s %-8s %-8s %s\n' "$run" "$status" "${tests:-?}" "${issues:-0}" "$unknown" "$seconds" "${left:--}"
    if [ -n "$running" ]; then
        echo "    left running after the run (stopped now):"
        echo "$running" | cut -c1-200 | sed 's/^/      /'
        stop_left "$running"
    fi
    if [ "$status" != 0 ] || [ -n "$left" ] || [ -n "$running" ] || [ "${unknown:-0}" != 0 ]; then
        failed=1
        # A run that failed for what it left in /tmp may have no such line: grep's status 1
        # must not end the loop under pipefail before the other runs.
        { grep -a -E '✘|error:|Fatal error' "$log" || true; } | head -n 40 | sed 's/^/    /'
    fi
done
exit "$failed"
