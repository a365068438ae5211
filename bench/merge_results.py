"""Cost of the core's exact merge of many hosts' results, and of
summarising the merge (what a fleet total costs).

    .venv/bin/python bench/merge_results.py [HOSTS]

Each host is the example result of tests/results/data (two jobs, four
workers) renamed; the check printed is exact (the merged group total is
HOSTS times one host's). A measurement, not a test: no bound is asserted.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from iolab import _native

EXAMPLE = Path(__file__).resolve().parents[1] / "tests" / "results" / "data" / "example_result.json"


def as_host(text: str, host: str) -> str:
    r = json.loads(text)
    for h in r["hosts"]:
        h["hostname"] = host
    for j in r["jobs"]:
        for w in j["workers"]:
            w["host"] = host
    for c in r["cpu"]:
        c["host"] = host
    return json.dumps(r)


def main(hosts: int) -> None:
    text = EXAMPLE.read_text()
    results = [as_host(text, f"h{i}") for i in range(hosts)]
    t = time.perf_counter()
    merged = _native.merge_results(results)
    merge_s = time.perf_counter() - t
    t = time.perf_counter()
    total = json.loads(_native.summarize(merged))["groups"][0]["total"]["ios"]
    summarize_s = time.perf_counter() - t
    one = json.loads(_native.summarize(text))["groups"][0]["total"]["ios"]
    print(f"{hosts} hosts: merge_results {merge_s * 1e3:.0f} ms, summarize of the merge {summarize_s * 1e3:.0f} ms")
    print(f"group 0 total I/Os {total} = {hosts} x {one}: {total == hosts * one}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
