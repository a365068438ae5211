#!/usr/bin/env bash
# The whole suite, N times in a row, each from a fresh clone, with a CPU
# burner beside it: the "passes 10 times in a row under load" check of
# issue 12, and the suite's minutes per run.
#
#   bench/soak_suite.sh                       # 10 runs of HEAD of this checkout
#   bench/soak_suite.sh --runs 3 --rev suite  # 3 runs of branch `suite`
#   bench/soak_suite.sh --burner 'stress-ng --cpu 1'
#
# Each run: `git clone` this checkout (at --rev) into a scratch directory,
# start the burner (default: `stress-ng --cpu 1` where installed, else one
# busy shell loop — one CPU-bound process either way), run
# `CI=true ./dev.sh test` there (set-up included: a fresh clone builds
# everything), stop the burner, record the exit status and the minutes,
# and remove the clone (a built clone is several GiB). CI=true makes a
# missing peer (fio, nbdkit, chromium...) a failure, not a skip.
#
# Output: one line per run on stdout and in $OUT/soak.tsv
# (run, exit status, minutes, the log), each run's whole log in $OUT/run-N.log
# (dev.sh prints every step's seconds: `[dev.sh] == done in N s: STEP`).
# Exits 0 only when every run passed. Stops at the first failure with
# --stop-on-failure.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
runs=10
rev=HEAD
burner=""
stop=0
out=${SOAK_OUT:-$ROOT/target/soak}
scratch=${SOAK_SCRATCH:-${TMPDIR:-/tmp}}
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=$2; shift 2 ;;
        --rev) rev=$2; shift 2 ;;
        --burner) burner=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --stop-on-failure) stop=1; shift ;;
        -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
        *) echo "soak_suite.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
case "$runs" in ''|*[!0-9]*) echo "soak_suite.sh: --runs wants a whole number, not '$runs'" >&2; exit 2 ;; esac
commit=$(git -C "$ROOT" rev-parse --verify "$rev^{commit}") || {
    echo "soak_suite.sh: '$rev' is not a commit of $ROOT" >&2; exit 2; }
if [ -z "$burner" ]; then
    if command -v stress-ng >/dev/null; then burner="stress-ng --cpu 1 --quiet"; else burner="while :; do :; done"; fi
fi
mkdir -p "$out"
printf 'run\texit\tminutes\tlog\n' >"$out/soak.tsv"
echo "soak: $runs runs of $commit, burner: $burner, logs in $out" >&2

burner_pid=""
suite_pid=""
clone=""
stop_group() {
    # The burner and the suite each run in their own process group (setsid):
    # stop that group only, and reap it.
    if [ -n "$1" ]; then kill -- "-$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; fi
}
cleanup() {
    stop_group "$suite_pid"
    suite_pid=""
    stop_group "$burner_pid"
    burner_pid=""
    if [ -n "$clone" ]; then rm -rf "$clone"; fi
    clone=""
}
# Ctrl-C or kill: stop the run under way (the suite is waited on in the
# background, so the signal is taken at once) and end the soak.
trap cleanup EXIT
trap 'cleanup; echo "soak: stopped by a signal" >&2; exit 130' INT TERM

failed=0
for i in $(seq 1 "$runs"); do
    clone=$(mktemp -d "$scratch/iolab-soak-$i.XXXXXX")
    git clone --quiet --no-hardlinks "$ROOT" "$clone/iolab"
    git -C "$clone/iolab" checkout --quiet "$commit"
    log=$out/run-$i.log
    setsid bash -c "$burner" >/dev/null 2>&1 &
    burner_pid=$!
    start=$(date +%s)
    rc=0
    (cd "$clone/iolab" && CI=true exec setsid ./dev.sh test) >"$log" 2>&1 &
    suite_pid=$!
    wait "$suite_pid" || rc=$?
    suite_pid=""
    minutes=$(awk -v s="$(( $(date +%s) - start ))" 'BEGIN { printf "%.1f", s / 60 }')
    cleanup
    printf '%s\t%s\t%s\t%s\n' "$i" "$rc" "$minutes" "$log" | tee -a "$out/soak.tsv"
    if [ "$rc" -ne 0 ]; then
        failed=$((failed + 1))
        grep -E 'FAILED|Error|error\[' "$log" | tail -n 20 >&2 || true
        [ "$stop" -eq 1 ] && break
    fi
done
echo "soak: $failed of $runs runs failed ($out/soak.tsv)" >&2
[ "$failed" -eq 0 ]
