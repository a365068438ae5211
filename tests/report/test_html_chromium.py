"""The HTML report in headless Chromium (Debian's chromium): every chart
drawn, no JavaScript error, a screenshot that is not blank — for a sweep
with repeats and for a single run without axes."""

from __future__ import annotations

from pathlib import Path

from analysis_fixtures import single_run, sweep
from chromium_check import body_attrs, check_rendered, open_report
from iolab.report.html import render_html

FIO_DATA = Path(__file__).parents[1] / "analysis" / "data" / "fio"


def test_sweep_report_renders(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_html(sweep(repeats=3)), encoding="utf-8")
    opened = check_rendered(page, tmp_path)
    assert "IOPS vs iodepth" in opened.dom and "knee: iodepth=8" in opened.dom


def test_single_run_report_renders(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_html(single_run()), encoding="utf-8")
    opened = check_rendered(page, tmp_path)
    assert "IOPS per point" in opened.dom


def test_a_script_error_is_caught(tmp_path: Path) -> None:
    # The checks above can fail: an error thrown on the page reaches data-js-errors.
    page = tmp_path / "broken.html"
    html = render_html(single_run()).replace("</body>", "<script>throw new Error('boom-42')</script></body>")
    page.write_text(html, encoding="utf-8")
    assert "boom-42" in body_attrs(open_report(page, tmp_path).dom)["data-js-errors"]


def test_fio_json_report_without_histograms_renders(tmp_path: Path) -> None:
    # fio's plain json has no histograms: the CDF goes through fio's printed percentiles.
    from iolab.analysis import analyze, load_dataset

    an = analyze(load_dataset(FIO_DATA / "groups.json"))
    page = tmp_path / "fio.html"
    page.write_text(render_html(an), encoding="utf-8")
    opened = check_rendered(page, tmp_path, png_rows=800)
    assert "IOPS vs bs" in opened.dom and "latency histogram" not in opened.dom
    assert "read: completion latency (clat) CDF (through the source's percentiles)" in opened.dom
