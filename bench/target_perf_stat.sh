#!/usr/bin/env bash
# The target's cost per request by `perf stat`: task-clock CPU, context
# switches and system calls per request of one fio run against
# `iolab target --zero-copy MODE` (a 1 GiB memory export on a Unix
# socket), the target on CPU 0 and fio on CPU 1 (different cores, as an
# idle machine's scheduler puts them, whatever else runs).
#
#   bench/target_perf_stat.sh MODE [FIO OPTIONS...]
#   bench/target_perf_stat.sh off --iodepth=32 --iodepth_batch_submit=16 --iodepth_batch_complete_min=16
#   for m in on off; do bench/target_perf_stat.sh $m --iodepth=8 --bs=64k; done
#
# fio runs 4 s of 4 KiB random reads unless FIO OPTIONS say otherwise;
# perf counts the target for 4 s from just before fio starts (a target
# waiting costs no CPU). Needs perf (with perf_event_paranoid <= 1 or
# root for the raw_syscalls tracepoint), fio with its nbd engine, taskset.
# Uses python/ of this checkout (PYTHONPATH) and $PYTHON (default python3).
set -euo pipefail
mode=${1:?usage: $0 off|auto|on [FIO OPTIONS...]}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d /tmp/iolab-perf-stat.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
sock=$tmp/t.sock
PYTHONPATH=$root/python taskset -c 0 "${PYTHON:-python3}" -m iolab.cli.main target --unix "$sock" \
    --export mem=memory,size=1g --zero-copy "$mode" >/dev/null 2>"$tmp/target.err" &
target=$!
trap 'kill $target 2>/dev/null || true; wait $target 2>/dev/null || true; rm -rf "$tmp"' EXIT
for _ in $(seq 300); do [ -S "$sock" ] || ! kill -0 $target 2>/dev/null && break; sleep 0.1; done
[ -S "$sock" ] || { echo "the target did not start: $(cat "$tmp/target.err")" >&2; exit 1; }
perf stat -x, -e task-clock,context-switches,raw_syscalls:sys_enter -p "$target" -o "$tmp/perf.csv" -- sleep 4 &
perf=$!
taskset -c 1 fio --name=nbd --ioengine=nbd --uri="nbd+unix:///mem?socket=$sock" --rw=randread --bs=4k \
    "$@" --time_based --runtime=4 --group_reporting --output-format=json >"$tmp/fio.json" 2>/dev/null
wait $perf
"${PYTHON:-python3}" - "$mode" "$*" "$tmp" <<'PY'
import json, sys
mode, opts, tmp = sys.argv[1:]
s = open(f"{tmp}/fio.json").read()
ios = sum(j["read"]["total_ios"] for j in json.loads(s[s.index("{"):])["jobs"])
v = {}
for line in open(f"{tmp}/perf.csv"):
    f = line.strip().split(",")
    if len(f) > 3 and f[0][:1].isdigit():
        v[f[2]] = float(f[0])
cpu_us = v["task-clock"] * 1e3 / ios  # task-clock is in ms
print(f"{mode:4s} {opts}: {ios} requests, {cpu_us:.2f} µs task-clock/request, "
      f"{v['context-switches'] / ios:.2f} context switches/request, {v['raw_syscalls:sys_enter'] / ios:.2f} syscalls/request")
PY
