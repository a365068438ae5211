"""A fleet's fio json+ (``--output-format=json+``): fio's client/server
layout with latency ``bins`` in every ``client_stats`` entry.

Truth: synthetic hosts of known samples (tests/fleet/synth.py): each host's
bins count its I/Os; ``All clients``' bins are the hosts' bins added bin by
bin (fio's ``sum_thread_stats`` adds the clients' buckets the same way), and
give back the percentiles of the union of every sample; fio's own
``fio_jsonplus_clat2csv`` reads and validates every entry.
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

from iolab.fleet.output import fio_json, formatted
from iolab.results.fio_plat import PLAT_NR, plat_index, plat_percentile, plat_value
from peers import require_peer

from .synth import fleet_results, hosts

LATS = ("slat_ns", "clat_ns", "lat_ns")


def _split(doc: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    stats = doc["client_stats"]
    (allc,) = [e for e in stats if e["jobname"] == "All clients"]
    return [e for e in stats if e["jobname"] != "All clients"], allc


def test_each_hosts_bins_count_its_ios_and_all_clients_adds_them_bin_by_bin() -> None:
    per_host, union = hosts(3, 2_000)
    doc = json.loads(formatted(fleet_results(per_host), "json+"))
    clients, allc = _split(doc)
    assert sorted(e["hostname"] for e in clients) == ["h0", "h1", "h2"]
    for e in clients:
        assert sum(e["read"]["clat_ns"]["bins"].values()) == e["read"]["total_ios"] == 2_000
        assert sum(e["read"]["lat_ns"]["bins"].values()) == e["read"]["clat_ns"]["N"]
    for lat in ("clat_ns", "lat_ns"):
        summed: Counter[str] = Counter()
        for e in clients:
            summed.update(e["read"][lat]["bins"])
        assert allc["read"][lat]["bins"] == dict(summed), lat
    # The merged bins are the union's: each sample in the bucket fio would count it in.
    truth = Counter(str(plat_value(plat_index(v))) for v in union)
    assert allc["read"]["clat_ns"]["bins"] == dict(truth)
    counts = [0] * PLAT_NR
    for v in union:
        counts[plat_index(v)] += 1
    for pct, printed in allc["read"]["clat_ns"]["percentile"].items():
        assert abs(plat_percentile(counts, float(pct)) - printed) <= max(1, printed / 64), (pct, printed)
    assert "bins" not in allc["write"]["clat_ns"]  # no writes: no bins, as fio
    # Plain fio-json stays without bins.
    assert all("bins" not in e["read"]["clat_ns"] for e in fio_json(fleet_results(per_host))["client_stats"])


def test_fio_jsonplus_clat2csv_reads_every_entry(tmp_path: Path) -> None:
    tool = require_peer("fio_jsonplus_clat2csv")
    per_host, _ = hosts(2, 500)
    doc = json.loads(formatted(fleet_results(per_host), "json+"))
    # The tool reads a document's "jobs"; fio's own client/server json+ has only
    # "client_stats" (the tool stops on it with KeyError 'jobs'), so its entries are given as jobs.
    (tmp_path / "plus.json").write_text(json.dumps({**doc, "jobs": doc["client_stats"]}))
    for extra in ([], ["--validate"]):
        r = subprocess.run([tool, "plus.json", "out.csv", *extra], cwd=tmp_path, capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
    assert "validated" in r.stdout
    for k in range(3):  # two hosts and All clients
        rows = (tmp_path / f"out_job{k}.csv").read_text().splitlines()
        assert rows[0].startswith("nsec, read_slat_ns_count") and len(rows) > 2
