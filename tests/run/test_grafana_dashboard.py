"""docs/grafana/iolab-latency.json: every query parses as PromQL (Prometheus'
own ``promtool check rules``) and names only metrics and labels that iolab's
``/metrics`` really export (the engine's, the fleet's and the target's text,
taken from the code that serves them)."""

from __future__ import annotations

import json
import re
import subprocess
import urllib.request
from pathlib import Path

from iolab import _native
from iolab.fleet.live import ClusterInterval, host_row, total_of
from iolab.fleet.live import prometheus_text as fleet_text
from iolab.run.metrics import engine_metrics_text

from tests.peers import require_peer

DASHBOARD = Path(__file__).resolve().parents[2] / "docs" / "grafana" / "iolab-latency.json"
#: Grafana's own variables, as a query would see them.
GRAFANA_VARS = {"$__rate_interval": "1m", "$__interval": "1m", "$__range": "5m"}


def _exported(tmp_path: Path) -> dict[str, set[str]]:
    """Metric name → its label names, over the three /metrics texts."""
    h = _native.hist_from_counts([(10_000, 5)])
    totals = {"job": 0, "ios": [5, 0], "bytes": [20480, 0], "lat_ns": [h, h]}
    texts = [engine_metrics_text([("h", "j", totals)])]
    progress = {"iops": [5.0, 0.0], "bw_bytes_per_s": [0.0, 0.0], "lat_ns": [h, h], "totals": [totals]}
    rows = (host_row("h", 0, progress, 1.0, ["j"]),)
    texts.append(fleet_text(ClusterInterval(1, 1_000_000_000, rows, total_of(rows))))
    t = _native.Target(None, ["m=memory,size=1m"], listen=f"unix:{tmp_path / 't.sock'}", stats_http="127.0.0.1:0")
    t.start()
    try:
        with urllib.request.urlopen(f"http://{t.addresses()['stats_http']}/metrics", timeout=10) as r:
            texts.append(r.read().decode())
    finally:
        t.shutdown()
        t.wait()
    names: dict[str, set[str]] = {}
    for text in texts:
        for m in re.finditer(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? ", text, re.M):
            keys = set(re.findall(r'([a-zA-Z_]\w*)="', m.group(2) or ""))
            names.setdefault(m.group(1), set()).update(keys)
    return names


def _queries() -> list[tuple[str, str]]:
    """(where, PromQL with Grafana's variables filled in) of every panel target."""
    dash = json.loads(DASHBOARD.read_text())
    out = []
    for panel in dash["panels"]:
        for target in panel["targets"]:
            expr = target["expr"]
            for k, v in GRAFANA_VARS.items():
                expr = expr.replace(k, v)
            expr = re.sub(r"\$\w+", ".*", expr)  # the dashboard's own variables, "All"
            out.append((f"panel {panel['id']} ({panel['title']}) {target['refId']}", expr))
    return out


def test_every_dashboard_query_parses(tmp_path: Path) -> None:
    promtool = require_peer("promtool")
    queries = _queries()
    assert len(queries) >= 10
    rules = {
        "groups": [
            {
                "name": "dashboard",
                "rules": [{"record": f"dashboard:q{i}", "expr": e} for i, (_, e) in enumerate(queries)],
            }
        ]
    }
    path = tmp_path / "rules.yml"
    path.write_text(json.dumps(rules))  # JSON is YAML
    ran = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_every_dashboard_query_names_exported_metrics_and_labels(tmp_path: Path) -> None:
    exported = _exported(tmp_path)
    dash = json.loads(DASHBOARD.read_text())
    variables = [v["query"]["query"] for v in dash["templating"]["list"] if v["type"] == "query"]
    used_kinds = set()
    for where, expr in [*_queries(), *(("variable", q) for q in variables)]:
        metrics = set(re.findall(r"\biolab_[a-z0-9_]+", expr))
        assert metrics, where
        for m in metrics:
            assert m in exported, f"{where}: {m} is not exported"
            used_kinds.add(m.split("_")[1])
        labels = set(re.findall(r"([a-z_]+)=~?\"", expr))
        for group in re.findall(r"by \(([^)]*)\)", expr):
            labels |= {x.strip() for x in group.split(",")}
        have = set().union(*(exported[m] for m in metrics))
        assert labels <= have, f"{where}: labels {labels - have} are not on {metrics}"
    assert used_kinds == {"engine", "fleet", "target"}
    # The heat maps read the buckets.
    heat = [p for p in dash["panels"] if p["type"] == "heatmap"]
    assert heat and all("_bucket" in p["targets"][0]["expr"] for p in heat)
