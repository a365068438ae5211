"""Text reports (iolab.report.text) of the example results document."""

from __future__ import annotations

import re
from typing import Any

import pytest
from iolab.report import format_quick_table, format_text
from iolab.report.text import LAT_FROM_ISSUE, LAT_INTENDED, _pct_label
from iolab.units import fmt_lat, lat_unit

Json = dict[str, Any]


def _section(text: str, header_start: str) -> str:
    """The lines of one entry: from its header to the next blank line."""
    start = text.index(header_start)
    end = text.find("\n\n", start)
    return text[start : end if end >= 0 else len(text)]


def test_one_entry_per_worker_or_per_job(doc: Json) -> None:
    text = format_text(doc)
    assert "randrw: (group 0, worker 0): ioengine=null rw=randrw rwmixread=70%" in text
    assert "randrw: (group 0, worker 1)" in text
    assert "rated-write: (group 1, workers 2): ioengine=null rw=randwrite bs=(R) 4 KiB, (W) 4 KiB" in text
    assert "iodepth=8 numjobs=2 direct=1" in text
    assert text.count("Run status group") == 2


def test_direction_lines_carry_units(doc: Json) -> None:
    w0 = _section(format_text(doc), "randrw: (group 0, worker 0)")
    read = doc["summary"]["jobs"][0]["workers"][0]["stats"]["read"]
    assert "  read: IOPS=1600, BW=6.250 MiB/s (6.554 MB/s), 18.75 MiB (19.66 MB) in 3.000 s" in w0
    assert "    slat (ns): min=300, avg=654, max=999, stdev=201" in w0
    assert f"clat (µs): min={read['clat']['min_ns'] / 1000:.2f}," in w0
    assert "    clat percentiles (µs):" in w0 and "99.90th=[" in w0
    assert "bw (MiB/s): min=" in w0 and "iops (I/O/s): min=1503, max=1768" in w0
    # Every latency line names its unit; no fio-style "1791k" anywhere.
    for line in w0.splitlines():
        if "min=" in line and "lat" in line:
            assert re.search(r"\((ns|µs|ms|s)\):", line), line
    assert not re.search(r"\d[kKM]\b", format_text(doc))


def test_unit_is_picked_per_line(doc: Json) -> None:
    clat = doc["summary"]["jobs"][0]["workers"][0]["stats"]["read"]["clat"]
    clat.update(min_ns=1_200_000, mean_ns=17_910_000.0, max_ns=25_000_000, stdev_ns=3_000_000.0)
    w0 = _section(format_text(doc), "randrw: (group 0, worker 0)")
    assert "    clat (ms): min=1.200, avg=17.91, max=25.00, stdev=3.000" in w0
    clat.update(mean_ns=1_791_000.0)  # 1.79 ms reads "1791 µs", never "1791k"
    w0 = _section(format_text(doc), "randrw: (group 0, worker 0)")
    assert "    clat (µs): min=1200, avg=1791, max=25000, stdev=3000" in w0
    assert "    slat (ns):" in w0


def test_rate_limited_job_labels_both_latencies(doc: Json) -> None:
    rated = _section(format_text(doc), "rated-write:")
    assert f"    {LAT_FROM_ISSUE} (µs): min=" in rated
    assert f"    {LAT_INTENDED} (µs): min=" in rated
    assert "lat (from intended time) percentiles (µs):" in rated
    plain = _section(format_text(doc), "randrw: (group 0, worker 0)")
    assert "from issue" not in plain and "intended" not in plain
    assert "    lat (µs): min=" in plain


def test_sync_distribution_and_thread_cpu(doc: Json) -> None:
    rated = _section(format_text(doc), "rated-write:")
    # Every sync took 1,200,000 ns: min and max exact (not the bucket edge 1199 µs).
    assert "  sync: 100 calls" in rated and "sync lat (µs): min=1200, avg=1200, max=1200" in rated
    assert "  clat distribution: <50 µs 4.23%, <100 µs 21.28%, <750 µs 25.35%, <2 ms 49.14%" in rated
    assert "  cpu (per worker thread, % of one CPU): usr=20.00%, sys=33.33%, ctx=4000" in rated


def test_group_lines_with_system_cpu_and_cycles(doc: Json) -> None:
    text = format_text(doc)
    g0 = _section(text, "Run status group 0")
    assert "   READ: bw=12.25 MiB/s (12.85 MB/s), per worker 6.003-6.250 MiB/s" in g0
    assert "run=3.000-3.000 s" in g0
    assert "  cpu on testhost over 3.000 s, 4 CPUs, 13292 I/Os, 51.92 MiB:" in g0
    assert "iolab process (% of one CPU): usr=33.33%, sys=66.67%, total=100.00%" in g0
    assert "system (% of all CPUs): usr=25.00%, nice=0.00%, sys=16.67%, irq=0.83%, softirq=7.50%" in g0
    assert "privileged=25.00%" in g0
    c = doc["summary"]["groups"][0]["cpu"][0]
    # c/B is seed 000's: privileged (sys+irq+softirq) cycles of all CPUs per byte, not either
    # cycles-per-I/O figure printed before it over the block size; the label says which.
    privileged = c["privileged_pct"] / 100 * c["clock_hz"] * c["ncpus"] * c["window_ns"] / 1e9 / c["bytes"]
    assert c["cycles_per_byte"] == pytest.approx(privileged)
    assert (
        f"c/B (privileged cycles per byte: sys+irq+softirq of all CPUs): {c['cycles_per_byte']:.1f}; "
        "clock 2.500 GHz (cpufreq base_frequency)"
    ) in g0
    assert "cycles per I/O: 1128498 (system), 564249 (iolab process)" in g0
    assert "per job 18.43-18.43 MiB/s" in _section(text, "Run status group 1")


def test_quick_table(doc: Json) -> None:
    table = format_quick_table(doc).splitlines()
    assert re.split(r"\s{2,}", table[0]) == ["job", "IOPS (I/O/s)", "MB/s", "lat p50 (µs)", "lat p99 (µs)"]
    m = doc["summary"]["jobs"][0]["merged"]
    p50 = m["lat_all"]["percentiles"][1]
    assert p50["percentile"] == 50.0
    row = table[2].split()
    iops = m["read"]["iops"] + m["write"]["iops"]
    assert row == ["randrw", f"{iops:.0f}", "18.15", fmt_lat(p50["value_ns"], 1e3), "1598"]
    assert table[3].startswith("rated-write")
    assert "from issue" in table[-1]


def test_quick_table_without_the_percentile(doc: Json) -> None:
    for job in doc["summary"]["jobs"]:
        job["merged"]["lat_all"]["percentiles"] = [{"percentile": 99.0, "value_ns": 5_000_000}]
    rows = format_quick_table(doc).splitlines()
    assert rows[0].endswith("lat p99 (µs)")
    assert rows[2].split()[-2:] == ["-", "5000"]


@pytest.mark.parametrize(("p", "label"), [(50.0, "50.00th"), (99.9, "99.90th"), (99.999, "99.999th"), (1, "1.00th")])
def test_percentile_labels_never_round_up(p: float, label: str) -> None:
    assert _pct_label(p) == label


@pytest.mark.parametrize(
    ("ns", "unit"),
    [(0, "ns"), (9_999, "ns"), (10_000, "µs"), (1_791_000, "µs"), (10_000_000, "ms"), (2e10, "s")],
)
def test_lat_unit(ns: float, unit: str) -> None:
    assert lat_unit(ns)[0] == unit


def test_quick_table_unit_is_the_same_for_fast_and_slow_runs(doc: Json) -> None:
    # Issue 21 item 8: the p99 column read ms in one run and µs in the next.
    heads = []
    for p99_ns in (900, 90_000_000):
        for job in doc["summary"]["jobs"]:
            job["merged"]["lat_all"]["percentiles"] = [
                {"percentile": 50.0, "value_ns": p99_ns // 2},
                {"percentile": 99.0, "value_ns": p99_ns},
            ]
        heads.append(format_quick_table(doc).splitlines()[0])
    assert heads[0] == heads[1] and heads[0].endswith("lat p50 (µs)  lat p99 (µs)"), heads


def test_trims_get_their_own_lines(cli: Any, workdir: Any) -> None:
    # A null trimwrite: 64 trims and 64 writes of 4 KiB, each direction its own lines.
    r = cli("run", "--name=t", "--ioengine=null", "--rw=trimwrite", "--size=256k", "--filename=x")
    assert r.exit_code == 0, r.output
    assert "ioengine=null rw=trimwrite" in r.stdout
    assert re.search(r"^  trim: IOPS=.*, 256\.0 KiB \(262\.1 kB\) in ", r.stdout, re.M), r.stdout
    assert re.search(r"^  write: IOPS=.*, 256\.0 KiB \(262\.1 kB\) in ", r.stdout, re.M), r.stdout
    assert re.search(r"^   TRIM: bw=", r.stdout, re.M), r.stdout
