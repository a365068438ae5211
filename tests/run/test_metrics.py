"""The engine's /metrics (``--metrics``): histograms in the core's buckets
that add up, counters equal to the result's totals, summaries only when asked."""

from __future__ import annotations

import math
import re
import urllib.request

import pytest
from iolab import _native
from iolab.errors import JobError
from iolab.jobs import JobSpec
from iolab.run.metrics import LATENCY, MetricsServer, engine_metrics_text, parse_metrics_address
from iolab.run.pipeline import RunPipeline, RunSettings

WIDTH = 2 ** (1 / 8)


def _series(text: str, name: str) -> dict[str, float]:
    """``{labels: value}`` of one metric name in exposition text."""
    out = {}
    for m in re.finditer(rf"^{name}\{{(.*)\}} (\S+)$", text, re.M):
        out[m.group(1)] = float(m.group(2))
    return out


def test_buckets_are_the_hdr_histogram_cumulated_at_log_spaced_bounds() -> None:
    bounds = _native.prom_bounds_ns()
    assert len(bounds) == 257 and bounds[0] == 32.0
    assert all(math.isclose(b / a, WIDTH) for a, b in zip(bounds, bounds[1:]))
    assert math.isclose(_native.PROM_BUCKET_WIDTH_PCT, (WIDTH - 1) * 100)
    values = [(700, 3), (1_000, 10), (1_100, 5), (250_000, 2), (200_000_000_000, 1)]
    h = _native.hist_from_counts(values)
    text = engine_metrics_text([("h", "j", {"ios": [21, 0], "bytes": [86016, 0], "lat_ns": [h, h]})])
    buckets = _series(text, f"{LATENCY}_bucket")
    read = {k: v for k, v in buckets.items() if 'direction="read"' in k}
    counts = [read[k] for k in sorted(read, key=lambda k: float(re.search(r'le="([^"]+)"', k).group(1)))]
    assert counts == sorted(counts), "cumulative counts never decrease"
    assert counts[-1] == 21  # +Inf: every sample, 200 s ones included
    # Each value counted at the first bound at or above it (3 significant digits).
    for value_ns, _ in values[:-1]:
        below = sum(n for v, n in values if v <= value_ns)
        first = next(i for i, b in enumerate(bounds) if b >= value_ns)
        assert counts[first] == below and counts[first - 1] < below, value_ns
    assert _series(text, f"{LATENCY}_count")['job="j",direction="read",host="h"'] == 21
    assert _series(text, "iolab_engine_bytes_total")['job="j",direction="read",host="h"'] == 86016
    assert "quantile=" not in text
    with_summaries = engine_metrics_text(
        [("h", "j", {"ios": [21, 0], "bytes": [0, 0], "lat_ns": [h, h]})], summaries=True
    )
    assert "# TYPE iolab_engine_latency_summary_seconds summary" in with_summaries


def test_a_trim_job_s_metrics_count_its_trims() -> None:
    server = MetricsServer("127.0.0.1:0", host="h1")
    try:
        job = JobSpec("t", (("ioengine", "null"), ("rw", "randtrim"), ("bs", "4k"), ("size", "16m"), ("filename", "x")))
        RunPipeline([job], RunSettings(interval="100ms", metrics=server)).execute()
        with urllib.request.urlopen(f"http://{server.address}/metrics", timeout=10) as r:
            text = r.read().decode()
    finally:
        server.close()
    ios = _series(text, "iolab_engine_ios_total")
    assert ios['job="t",direction="trim",host="h1"'] == 4096
    assert ios['job="t",direction="write",host="h1"'] == 0
    assert _series(text, f"{LATENCY}_count")['job="t",direction="trim",host="h1"'] == 4096


def test_address_forms_and_a_clear_error() -> None:
    assert parse_metrics_address("9464") == ("127.0.0.1", 9464)
    assert parse_metrics_address(":9464") == ("127.0.0.1", 9464)
    assert parse_metrics_address("[::1]:9464") == ("::1", 9464)
    with pytest.raises(JobError, match="expected HOST:PORT"):
        parse_metrics_address("localhost:http")


def test_a_run_s_metrics_end_equal_to_its_result() -> None:
    server = MetricsServer("127.0.0.1:0", host="h1")
    try:
        job = JobSpec("m", (("ioengine", "null"), ("rw", "randrw"), ("bs", "4k"), ("size", "64m"), ("filename", "x")))
        out = RunPipeline([job], RunSettings(interval="100ms", metrics=server)).execute()
        with urllib.request.urlopen(f"http://{server.address}/metrics", timeout=10) as r:
            text = r.read().decode()
    finally:
        server.close()
    workers = out.result["jobs"][0]["workers"]
    ios = _series(text, "iolab_engine_ios_total")
    for d, direction in enumerate(("read", "write")):
        labels = f'job="m",direction="{direction}",host="h1"'
        assert ios[labels] == sum(w["dirs"][d]["ios"] for w in workers) > 0
        assert _series(text, "iolab_engine_bytes_total")[labels] == sum(w["dirs"][d]["bytes"] for w in workers)
        assert _series(text, f"{LATENCY}_count")[labels] == ios[labels]


def test_cli_refuses_summaries_without_an_endpoint_and_a_bad_or_taken_address(cli) -> None:
    job = ["--name=a", "--ioengine=null", "--size=1m", "--filename=x"]
    r = cli("run", *job, "--metrics-summaries")
    assert r.exit_code == 2 and "--metrics-summaries: /metrics is served with --metrics HOST:PORT" in r.stderr
    r = cli("target", "--export", "m=memory,size=1m", "--metrics-summaries")
    assert r.exit_code == 2 and "give it too" in r.stderr, r.stderr
    r = cli("run", *job, "--metrics", "foo:bar")
    assert r.exit_code == 2 and "expected HOST:PORT or PORT" in r.stderr
    taken = MetricsServer("127.0.0.1:0")
    try:
        r = cli("run", *job, "--metrics", taken.address)
        assert r.exit_code == 2 and f"--metrics {taken.address}: cannot listen there" in r.stderr, r.stderr
    finally:
        taken.close()


def test_a_sweep_feeds_the_endpoint_from_every_run(workdir) -> None:
    from iolab.plans.sweep import SweepOptions, run_sweep

    plan = workdir / "plan.toml"
    plan.write_text(
        '[plan]\nname = "m"\n[base]\nfilename = "t.dat"\nsize = "1m"\nrw = "randread"\nioengine = "null"\n'
        'time_based = true\nruntime = "50ms"\n[axes]\nbs = ["4k", "8k"]\n'
    )
    server = MetricsServer("127.0.0.1:0", host="h")
    seen: list[str] = []
    try:
        inner_update = server.update

        def update(names, progress):  # type: ignore[no-untyped-def]
            inner_update(names, progress)
            seen.append(server.text())

        server.update = update  # type: ignore[method-assign]
        out = run_sweep(plan, workdir / "res", SweepOptions(metrics=server))
    finally:
        server.close()
    assert out.runs_done_now == 2
    # Each run's bytes per I/O is its point's block size: both runs were served.
    per_io = set()
    for text in seen:
        ios = _series(text, "iolab_engine_ios_total")
        nbytes = _series(text, "iolab_engine_bytes_total")
        for labels, n in ios.items():
            if n and 'direction="read"' in labels:
                per_io.add(nbytes[labels] / n)
    assert per_io == {4096.0, 8192.0}


PROTOBUF_ACCEPT = (
    "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,"
    "text/plain;version=0.0.4;q=0.3"
)


def _get(address: str, accept: str) -> tuple[str, bytes]:
    req = urllib.request.Request(f"http://{address}/metrics", headers={"Accept": accept})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.headers["Content-Type"], r.read()


def _delimited_families(body: bytes) -> int:
    """How many length-delimited messages ``body`` holds exactly."""
    n, i = 0, 0
    while i < len(body):
        length, shift = 0, 0
        while True:
            b = body[i]
            i += 1
            length |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                break
        i += length
        n += 1
    assert i == len(body), "the last message runs past the body"
    return n


def test_the_protobuf_exposition_only_for_a_scraper_that_asks() -> None:
    h = _native.hist_from_counts([(10_000, 5)])
    totals = {"job": 0, "ios": [5, 0], "bytes": [20480, 0], "lat_ns": [h, h]}
    for summaries in (False, True):
        server = MetricsServer("127.0.0.1:0", host="h", summaries=summaries)
        try:
            server.update(["j"], {"totals": [totals]})
            ctype, body = _get(server.address, PROTOBUF_ACCEPT)
            if summaries:  # summaries exist only in the text format
                assert ctype.startswith("text/plain") and b"quantile=" in body
            else:
                assert ctype == _native.PROM_PROTOBUF_CONTENT_TYPE
                assert _delimited_families(body) == 3  # two counters and the histogram
                assert b"iolab_engine_latency_seconds" in body and b"job" in body
            ctype, body = _get(server.address, "text/plain;version=0.0.4")
            assert ctype.startswith("text/plain") and b"iolab_engine_latency_seconds_bucket{" in body
        finally:
            server.close()
    with pytest.raises(ValueError, match="a counter family takes numbers"):
        _native.prom_protobuf([("x_total", "h", "counter", [([], h)])])
