"""A real Prometheus scrapes two running engines (``iolab run --metrics``):
``histogram_quantile`` over their summed histograms agrees with iolab's
exact merge of the same window within one bucket width (2^(1/8), ~9 %).

Twice: Prometheus reading the classic buckets of the text format, and
(``--enable-feature=native-histograms``) the native histograms of the
protobuf exposition it then asks for.

The window is the whole of what Prometheus scraped: the engines wait
(``startdelay``) until Prometheus has their zero counters, so ``rate``
over the run has no per-bucket start extrapolation; the last scrape's
I/O counter names the engines' intervals it covered (the counters are sums
of whole intervals), and their histograms from the results, merged by the
core, are the exact answer.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from iolab import _native
from iolab.run.metrics import LATENCY

from tests.peers import require_peer
from tests.waits import read_until, wait_until

WIDTH = 2 ** (1 / 8)
RUNTIME_S = 4
STARTDELAY_S = 6


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _engine(out: Path, name: str) -> subprocess.Popen[bytes]:
    # psync reads of a cached file (about 1 µs): the null engine's ~30 ns
    # would sit in the lowest bucket (up to 32 ns), where Prometheus
    # interpolates from 0 and the bucket width does not bound its answer.
    data = out.with_suffix(".data")
    cmd = [sys.executable, "-m", "iolab.cli.main", "run", f"--name={name}", "--ioengine=psync", "--rw=randread",
           "--bs=4k", "--size=1m", f"--filename={data}", "--time_based", f"--runtime={RUNTIME_S}s",
           f"--startdelay={STARTDELAY_S}s", "--rate_iops=3000", "--interval=200ms",
           "--output-format=json", "-o", str(out), "--metrics", "127.0.0.1:0"]  # fmt: skip
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _query(port: int, promql: str, at: float) -> list[dict[str, Any]]:
    q = urllib.parse.urlencode({"query": promql, "time": f"{at:.3f}"})
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/query?{q}", timeout=10) as r:
        body = json.load(r)
    assert body["status"] == "success", body
    return list(body["data"]["result"])


def _intervals(result_file: Path) -> list[dict[str, Any]]:
    doc = json.loads(result_file.read_text())
    (worker,) = doc["result"]["jobs"][0]["workers"]
    return list(worker["series"])


def _covered(series: list[dict[str, Any]], count: int) -> list[str]:
    """The read histograms of the first intervals whose I/Os add up to ``count``."""
    hists, total = [], 0
    for s in series:
        if total == count:
            break
        total += int(s["dirs"][0]["ios"])
        hists.append(s["dirs"][0]["lat_ns"])
    assert total == count, f"a scrape's count {count} is not a sum of whole intervals"
    return hists


@pytest.mark.parametrize("native", [False, True], ids=["classic", "native"])
def test_prometheus_histogram_quantile_matches_the_exact_merge(tmp_path: Path, native: bool) -> None:
    """Classic: Prometheus reads the text format's ``_bucket`` series. Native:
    with ``--enable-feature=native-histograms`` it asks for the protobuf
    exposition and stores the latency as a native histogram (schema 3)."""
    prometheus = require_peer("prometheus")
    outs = [tmp_path / "a.json", tmp_path / "b.json"]
    engines = [_engine(o, n) for o, n in zip(outs, ("a", "b"))]
    prom = None
    try:
        ports = []
        for e in engines:
            assert e.stderr is not None
            line = read_until(e, e.stderr, "metrics on http://", 20)
            ports.append(line.split("http://", 1)[1].split("/", 1)[0])
        web = _free_port()
        (tmp_path / "prometheus.yml").write_text(
            "global: {scrape_interval: 250ms, scrape_timeout: 200ms}\n"
            "scrape_configs:\n"
            f"  - job_name: iolab\n    honor_labels: true\n    static_configs: [{{targets: [{', '.join(ports)}]}}]\n"
        )
        cmd = [prometheus, f"--config.file={tmp_path / 'prometheus.yml'}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
               f"--web.listen-address=127.0.0.1:{web}"]  # fmt: skip
        if native:
            cmd.append("--enable-feature=native-histograms")
        prom = subprocess.Popen(
            cmd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

        def zero_scraped() -> bool:
            try:
                rows = _query(web, 'iolab_engine_ios_total{direction="read"}', time.time())
            except OSError:
                return False
            return len(rows) == 2

        wait_until(zero_scraped, STARTDELAY_S, "Prometheus scraping both engines before they start I/O", prom)
        for e in engines:
            assert e.wait(timeout=60) == 0, e.stderr.read() if e.stderr else ""
        end = time.time()
        window = "[1m]"
        firsts = _query(web, f'min_over_time(iolab_engine_ios_total{{direction="read"}}{window})', end)
        assert [float(r["value"][1]) for r in firsts] == [0.0, 0.0], "the first scrapes saw I/O already"
        last_q = f'max_over_time(iolab_engine_ios_total{{direction="read"}}{window})'
        lasts = {r["metric"]["job"]: int(float(r["value"][1])) for r in _query(web, last_q, end)}
        exact = _native.hist_merge(
            [h for out, job in zip(outs, ("a", "b")) for h in _covered(_intervals(out), lasts[job])]
        )
        percentiles = [50.0, 99.0, 99.9]
        st = _native.hist_stats(exact, percentiles)
        assert st["count"] == sum(lasts.values()) > 0
        for p in percentiles:
            series = f'{LATENCY}{{direction="read"}}' if native else f'{LATENCY}_bucket{{direction="read"}}'
            summed = f"sum(rate({series}{window}))" if native else f"sum by (le) (rate({series}{window}))"
            promql = f"histogram_quantile({p / 100}, {summed})"
            (row,) = _query(web, promql, end)
            got_ns = float(row["value"][1]) * 1e9
            want_ns = st["percentiles"][p]
            assert want_ns / WIDTH <= got_ns <= want_ns * WIDTH, (p, got_ns, want_ns)
    finally:
        for e in engines:
            if e.poll() is None:
                e.kill()
                e.wait()
        if prom is not None:
            prom.terminate()
            prom.wait(timeout=20)
