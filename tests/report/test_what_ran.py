"""Reports show what ran (issue 21 item 4): `iolab report result.json` of a
job with a bssplit, an rw mix and a rate cap names all three in its tables
and its charts' labels (drawn, checked in Chromium); options without effect
for a job's rw (fio's rwmixread=50 of a pure randread) read "-" and are
never plotted as a number."""

from __future__ import annotations

import json
import re
from pathlib import Path

from chromium_check import check_rendered
from iolab.analysis import analyze, load_dataset
from iolab.analysis.job_options import no_effect, written_options

FIO_DATA = Path(__file__).parents[1] / "analysis" / "data" / "fio"
BASE = ["--ioengine=null", "--size=1m", "--runtime=300ms", "--time_based"]
CAPPED = ["--name=capped", *BASE, "--rw=randrw", "--rwmixread=70", "--bssplit=4k/50:64k/50", "--rate_iops=2000"]
FREE = ["--name=free", *BASE, "--rw=randread", "--bs=4k", "--stonewall"]


def _result(cli, *job: str) -> Path:
    r = cli("run", *job, "--output", "r.json", "--output-format", "json")
    assert r.exit_code == 0, r.output
    return Path("r.json").resolve()


def test_result_file_tables_and_charts_name_bssplit_mix_and_rate_cap(cli, workdir: Path) -> None:
    path = _result(cli, *CAPPED, *FREE)
    text = cli("report", str(path))
    assert text.exit_code == 0, text.output
    table = text.stdout.split("Throughput and latency\n", 1)[1]
    header, capped_read, _, free_read = table.splitlines()[:4]
    assert header.split()[:6] == ["rw", "rwmixread", "bssplit", "rate_iops", "bs", "dir"], header
    assert capped_read.split()[:6] == ["randrw", "70", "4k/50:64k/50", "2000", "-", "read"], capped_read
    # A pure randread: no mix, no split, no cap — "-", not fio's rwmixread=50.
    assert free_read.split()[:6] == ["randread", "-", "-", "-", "4k", "read"], free_read
    # The cap (per direction, as fio's) is why the capped point is slow: reads, 70 %, run at it,
    # never above it, while the free point runs 10x faster at least. A loaded machine issues late,
    # not early: 1573 IOPS of the 2000 beside 2 busy loops at load 16 on 2 cores (failed >= 1800).
    capped, free = float(capped_read.split()[6]), float(free_read.split()[6])
    assert 1000 <= capped <= 2050 and free >= 10 * capped, table

    page = workdir / "r.html"
    r = cli("report", str(path), "-f", "html", "-o", str(page))
    assert r.exit_code == 0, r.output
    opened = check_rendered(page, workdir)
    label = "rw=randrw rwmixread=70 bssplit=4k/50:64k/50 rate_iops=2000"
    # The per-point bars are labelled by what ran, in the SVG plotly drew (tick text), not only in the table.
    ticks = re.findall(r'<text[^>]*class="xtick"[^>]*>.*?</text>|<g class="xtick">.*?</g>', opened.dom)
    assert any(label in t for t in ticks), ticks[:6]
    assert "rw=randread bs=4k" in opened.dom
    assert "rwmixread=50" not in opened.dom and "rwmixread=-" not in opened.dom


def test_single_job_result_names_what_ran_in_the_job_line_and_chart_titles(cli, workdir: Path) -> None:
    path = _result(cli, *CAPPED)
    what = "rw=randrw rwmixread=70 bssplit=4k/50:64k/50 rate_iops=2000"
    text = cli("report", str(path))
    assert f"job (every point): {what} ioengine=null iodepth=1 numjobs=1" in text.stdout, text.output
    doc = json.loads(cli("report", str(path), "--format", "json").stdout)
    assert doc["job"] == {"rw": "randrw", "rwmixread": 70, "bssplit": "4k/50:64k/50", "rate_iops": "2000",
                          "ioengine": "null", "iodepth": 1, "numjobs": 1, "direct": False}  # fmt: skip
    page = workdir / "one.html"
    assert cli("report", str(path), "-f", "html", "-o", str(page)).exit_code == 0
    opened = check_rendered(page, workdir)
    # Every chart's title carries it as a subtitle, drawn by plotly.
    titles = re.findall(r'<text class="gtitle"[^>]*>(.*?)</text>', opened.dom)
    assert titles and all(what in re.sub(r"<[^>]+>", "", t) for t in titles), titles


def test_written_options_per_direction_and_caps() -> None:
    job = {"rw": {"pattern": "random", "read_pct": 100}, "bs": [{"fixed": 4096}, {"fixed": 65536}],
           "rate_iops": [None, 300], "rate_bytes_per_s": [None, None], "iodepth": 4}  # fmt: skip
    # A read-only job: the write block size and the write cap do nothing, so neither is shown.
    assert written_options(job) == [("rw", "randread"), ("bs", "4k"), ("iodepth", 4)]
    job["rw"] = {"pattern": "sequential", "read_pct": 50}
    job["rate_bytes_per_s"] = [1 << 20, 1 << 20]
    assert written_options(job)[:5] == [("rw", "rw"), ("rwmixread", 50), ("bs", "4k,64k"), ("rate_iops", ",300"),
                                        ("rate", "1m")]  # fmt: skip
    job["bs"] = [{"range": {"min": 4096, "max": 16384}}, {"fixed": 8192}]
    assert ("bsrange", "4k-16k,8k-8k") in written_options(job)
    assert no_effect("rwmixread", "randread") and not no_effect("rwmixread", "randrw")
    assert not no_effect("iodepth", "randread")


def test_fio_default_mix_of_a_pure_read_is_not_shown_or_plotted() -> None:
    doc = json.loads((FIO_DATA / "groups.json").read_text())
    assert any(j["job options"].get("rwmixread") for j in doc["jobs"])  # the mixed job sets it
    ds = load_dataset(FIO_DATA / "groups.json")
    mix = {p.samples[0].config.rw: p.params["rwmixread"] for p in ds.points}
    assert mix == {"randread": "-", "randrw": "70"}, mix
    assert all("rwmixread" not in p.values for p in ds.points)
    an = analyze(ds)
    from iolab.report.charts import all_charts

    assert not any("vs rwmixread" in c.title for c in all_charts(an))


def test_a_mix_written_to_make_a_job_pure_had_its_effect() -> None:
    # A mix sweep's randrw at rwmixread=100 runs as randread: its rwmixread is
    # a position on the axis, not "-" (the fio-study lab's mix sweep failed on it).
    assert not no_effect("rwmixread", "randread", "100") and not no_effect("rwmixread", "randwrite", 0)
    assert not no_effect("rwmixwrite", "randwrite", "100")
    # fio's default 50 on a pure randread changed nothing; nor does an unknown value.
    assert no_effect("rwmixread", "randread", 50) and no_effect("rwmixread", "randread")
    assert not no_effect("rwmixread", "randrw", 50) and not no_effect("bs", "randread", "4k")
