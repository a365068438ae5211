"""The total of a fleet run is the exact merge of its hosts.

Truth: per-host results built from known latency samples
(:mod:`tests.fleet.synth`): the total's counts and bytes are the sums, and
its percentiles are those of the union of every sample — to the
histogram's precision (3 significant digits) — not an average of the
hosts' percentiles (which the hosts' different distributions would make
visibly wrong)."""

from __future__ import annotations

import json
import math

from iolab import _native
from iolab.fleet.merge import merge_results, table_rows
from iolab.fleet.output import fio_json, text
from iolab.units import fmt_num

from .synth import BS, base, fleet_results, host_result, hosts


def _exact_percentile(samples: list[int], p: float) -> int:
    """HdrHistogram's definition: the smallest value with at least p% of samples at or below it."""
    s = sorted(samples)
    rank = max(1, math.ceil(p / 100 * len(s)))
    return s[rank - 1]


def test_total_is_sum_of_counts_and_union_percentiles() -> None:
    per_host, union = hosts(4, 5_000)
    total = merge_results([r for _, r in per_host])
    rows = table_rows(per_host, total)
    host_rows = [r for r in rows if r["host"] != "Total"]
    (tot,) = [r for r in rows if r["host"] == "Total"]
    assert [r["host"] for r in host_rows] == ["h0", "h1", "h2", "h3"]
    assert tot["ios"] == sum(r["ios"] for r in host_rows) == len(union)
    assert tot["bytes"] == sum(r["bytes"] for r in host_rows) == len(union) * BS
    for p, key in ((50.0, "lat_p50_ns"), (99.0, "lat_p99_ns")):
        exact = _exact_percentile(union, p)
        # 3 significant digits: within 0.1 % (plus one unit for rounding).
        assert abs(tot[key] - exact) <= exact * 1e-3 + 1, (p, tot[key], exact)
        averaged = sum(r[key] for r in host_rows) / len(host_rows)
        assert abs(averaged - exact) > exact * 0.01, "the test's hosts must make averaging visibly wrong"
    assert abs(tot["lat_mean_ns"] - sum(union) / len(union)) <= (sum(union) / len(union)) * 1e-3
    # IOPS over the longest runtime, as the core's group figures
    assert tot["runtime_ns"] == max(r["runtime_ns"] for r in host_rows)
    assert tot["iops"] == tot["ios"] * 1e9 / tot["runtime_ns"]


def test_merged_result_summarises_in_the_core_to_the_same_total() -> None:
    per_host, union = hosts(3, 2_000)
    total = merge_results([r for _, r in per_host])
    summary = json.loads(_native.summarize(json.dumps(total)))
    merged = summary["jobs"][0]["merged"]["read"]
    assert merged["ios"] == len(union)
    p99 = next(p["value_ns"] for p in merged["lat"]["percentiles"] if p["percentile"] == 99.0)
    (tot,) = [r for r in table_rows(per_host, total) if r["host"] == "Total"]
    assert p99 == tot["lat_p99_ns"]
    assert [h["hostname"] for h in total["hosts"]] == ["h0", "h1", "h2"]


def test_thousand_hosts_total_is_the_union_of_their_samples() -> None:
    # At fleet scale (issue 29): 1,000 hosts, each with its own distribution;
    # the core's summary (workers decoded one at a time) and the table's
    # total both equal the union of every host's samples, and every host
    # keeps its own row and its own CPU entry.
    n = 1_000
    per_host, union = hosts(n, 50)
    total = merge_results([r for _, r in per_host])
    rows = table_rows(per_host, total)
    (tot,) = [r for r in rows if r["host"] == "Total"]
    assert len(rows) == n + 1
    assert tot["ios"] == len(union) and tot["bytes"] == len(union) * BS
    summary = json.loads(_native.summarize(json.dumps(total)))
    job = summary["jobs"][0]
    assert len(job["workers"]) == n and job["merged"]["read"]["ios"] == len(union)
    assert [c["host"] for c in summary["groups"][0]["cpu"]] == [f"h{i}" for i in range(n)]
    assert all(c["ios"] == 50 for c in summary["groups"][0]["cpu"])
    lat = job["merged"]["read"]["lat"]
    assert lat["count"] == len(union)
    for p in (50.0, 99.0, 99.9):
        exact = _exact_percentile(union, p)
        got = next(x["value_ns"] for x in lat["percentiles"] if x["percentile"] == p)
        assert abs(got - exact) <= exact * 1e-3 + 1, (p, got, exact)
        key = {50.0: "lat_p50_ns", 99.0: "lat_p99_ns"}.get(p)
        if key:
            assert tot[key] == got
    # The synthetic histograms carry no exact extremes: bucket edges, within 0.1 %.
    for got, exact in ((lat["min_ns"], min(union)), (lat["max_ns"], max(union))):
        assert abs(got - exact) <= exact * 1e-3 + 1, (got, exact)


def test_fio_json_all_clients_agrees_with_its_hosts() -> None:
    per_host, union = hosts(3, 2_000)
    doc = fio_json(fleet_results(per_host))
    stats = doc["client_stats"]
    clients = [e for e in stats if e["jobname"] != "All clients"]
    (allc,) = [e for e in stats if e["jobname"] == "All clients"]
    assert sorted(e["hostname"] for e in clients) == ["h0", "h1", "h2"]
    assert allc["read"]["total_ios"] == sum(e["read"]["total_ios"] for e in clients) == len(union)
    assert allc["read"]["io_bytes"] == sum(e["read"]["io_bytes"] for e in clients)
    exact = _exact_percentile(union, 99.0)
    got = allc["read"]["lat_ns"]["percentile"]["99.000000"]
    assert abs(got - exact) <= exact * 1e-3 + 1
    assert "jobs" not in doc


def test_merge_refuses_nothing() -> None:
    import pytest

    with pytest.raises(ValueError):
        merge_results([])


def test_table_total_is_the_cores_group_figure() -> None:
    """One figure: the table's total row equals the core's group summary of
    the merged result (IOPS, bytes/s, p50, p99, mean)."""
    per_host, _ = hosts(3, 3_000)
    total = merge_results([r for _, r in per_host])
    (tot,) = [r for r in table_rows(per_host, total) if r["host"] == "Total"]
    group = json.loads(_native.summarize(json.dumps(total)))["groups"][0]["read"]
    assert (tot["ios"], tot["bytes"]) == (group["ios"], group["bytes"])
    assert abs(tot["iops"] - group["iops"]) <= 1e-9 * group["iops"]
    assert abs(tot["bw_bytes_per_s"] - group["bw_bytes_per_s"]) <= 1e-9 * group["bw_bytes_per_s"]
    pct = {p["percentile"]: p["value_ns"] for p in group["lat"]["percentiles"]}
    assert (tot["lat_p50_ns"], tot["lat_p99_ns"]) == (pct[50.0], pct[99.0])
    assert abs(tot["lat_mean_ns"] - group["lat"]["mean_ns"]) <= 1e-6 * group["lat"]["mean_ns"]


def test_merge_refuses_different_intervals_or_versions() -> None:
    import copy

    import pytest
    from iolab.errors import IolabError

    per_host, _ = hosts(2, 10)
    a, b = per_host[0][1], copy.deepcopy(per_host[1][1])
    b["interval_ns"] = 2 * a["interval_ns"]
    with pytest.raises(IolabError, match="same interval"):
        merge_results([a, b])
    b["interval_ns"], b["tool_version"] = a["interval_ns"], "0.0.0"
    with pytest.raises(IolabError, match="same iolab"):
        merge_results([a, b])


def test_host_table_latency_keeps_four_digits_below_a_microsecond() -> None:
    # Session 12: `iolab fleet -n 4 run --ioengine=null ...` printed "p50 µs 0.0" and "p99 µs 0.1"
    # beside "AVG_LAT µs 0.2": one decimal of a µs hid the null engine's tens of ns.
    template = base()
    per_host = [(f"h{i}", host_result(template, f"h{i}", [40 + i, 61, 61, 75, 90] * 200, 10**9)) for i in range(2)]
    res = fleet_results(per_host)
    lines = {line.split("|")[0].strip(): line for line in text(res).splitlines() if "| read" in line}
    for row in res.rows:
        cells = [c.strip() for c in lines[row["host"]].split("|")]
        assert cells[5:8] == [fmt_num(row[k] / 1e3) for k in ("lat_mean_ns", "lat_p50_ns", "lat_p99_ns")], cells
        assert cells[6] != "0.0" and 0.05 < float(cells[6]) < 0.07, cells
