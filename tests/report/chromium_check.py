"""Open an HTML report in headless Chromium and check it as a reader would
see it: every chart drawn, no JavaScript error, a screenshot that is not
blank.

- :func:`open_report` runs Chromium once on the file with ``--dump-dom``
  and ``--screenshot`` (both after a virtual-time budget, so plotly's
  promises have resolved).
- :func:`chart_marks` counts, per chart, the marks plotly actually drew
  into its plot area (line segments, markers, bars, boxes) in the DOM after
  rendering: a chart whose traces plotly could not place (strings on a
  linear axis, one point drawn as a line) has none, whatever the page says.
- :func:`png_colours` decodes the screenshot with zlib (Pillow is not a
  dependency; PNG's five row filters are short) and counts distinct colours.
"""

from __future__ import annotations

import re
import struct
import subprocess
import zlib
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from peers import require_peer

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--no-first-run",
    "--hide-scrollbars",
    "--virtual-time-budget=15000",
]


@dataclass
class Opened:
    dom: str
    png: bytes
    log: str


def _chromium(args: list[str], tmp: Path) -> subprocess.CompletedProcess[str]:
    exe = require_peer("chromium")
    profile = tmp / "chromium-profile"
    cmd = [exe, *FLAGS, f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)


def open_report(page: Path, tmp: Path, width_px: int = 1280) -> Opened:
    # One Chromium for both: after the virtual-time budget it dumps the DOM
    # to stdout and writes the screenshot (a start of Chromium is most of
    # what a report test costs on a loaded machine).
    url = page.resolve().as_uri()
    shot = tmp / "shot.png"
    shot.unlink(missing_ok=True)
    ran = _chromium([f"--window-size={width_px},2000", f"--screenshot={shot}", "--dump-dom", url], tmp)
    assert ran.returncode == 0 and shot.is_file(), ran.stderr[-3000:]
    return Opened(ran.stdout, shot.read_bytes(), ran.stderr)


def body_attrs(dom: str) -> dict[str, str]:
    body = re.search(r"<body([^>]*)>", dom)
    assert body is not None, dom[:2000]
    return dict(re.findall(r'([\w-]+)="([^"]*)"', body.group(1)))


def console_errors(log: str) -> list[str]:
    """Lines Chromium logged for the page's console: uncaught errors, console.error."""
    return [line for line in log.splitlines() if "CONSOLE" in line and ("Uncaught" in line or "Error" in line)]


def check_rendered(page: Path, tmp: Path, png_rows: int = 2000) -> Opened:
    """Assert the report at ``page`` renders completely; return what Chromium saw."""
    opened = open_report(page, tmp)
    attrs = body_attrs(opened.dom)
    expected = int(attrs["data-charts-expected"])
    assert expected > 0
    assert attrs.get("data-charts-rendered") == str(expected), attrs
    assert attrs.get("data-js-errors") == "", attrs
    assert console_errors(opened.log) == [], console_errors(opened.log)
    divs = re.findall(r'<div class="chart[^"]*" id="chart-\d+"', opened.dom)
    assert len(divs) == expected
    # plotly draws each chart into its own <svg class="main-svg"> elements
    assert opened.dom.count('class="main-svg"') >= expected, opened.dom.count('class="main-svg"')
    marks = chart_marks(opened.dom)
    titles = re.findall(r'<div class="chart[^"]*" id="chart-\d+" role="img" aria-label="([^"]*)"', opened.dom)
    blank = [t for i, t in enumerate(titles) if marks.get(i, 0) == 0]
    assert not blank, f"charts with nothing drawn: {blank}; marks per chart: {marks}"
    assert png_colours(opened.png, png_rows) > 50
    return opened


class _Marks(HTMLParser):
    """Walks the rendered DOM; inside chart ``N``'s plotly trace groups
    (``<g class="trace ...">``) counts the ``<path>`` s whose outline draws
    something: a line with at least two vertices, a marker, a bar or box
    with a size. plotly leaves a trace it cannot place as an empty group,
    or a path of ``M0,0Z`` / with NaN."""

    def __init__(self) -> None:
        super().__init__()
        self.marks: dict[int, int] = {}
        self.stack: list[tuple[str, int, bool]] = []  # (tag, chart, in a trace)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        chart, in_trace = self.stack[-1][1:] if self.stack else (-1, False)
        m = re.fullmatch(r"chart-(\d+)", a.get("id", ""))
        if tag == "div" and m and "chart" in a.get("class", "").split():
            chart = int(m.group(1))
            self.marks.setdefault(chart, 0)
        classes = a.get("class", "").split()
        if tag == "g" and "trace" in classes:
            in_trace = True
        if tag == "path" and chart >= 0 and in_trace and _draws(a.get("d", "")):
            self.marks[chart] += 1
        if tag not in _VOID:
            self.stack.append((tag, chart, in_trace))

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            if self.stack.pop()[0] == tag:
                break


_VOID = {"br", "img", "meta", "link", "input", "hr", "col", "source", "wbr", "area", "base", "embed"}


def _draws(d: str) -> bool:
    """Whether an SVG path outline covers more than one spot."""
    if not d or "NaN" in d or "Infinity" in d:
        return False
    numbers = [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", d)]
    return len(numbers) >= 3 and len(set(numbers)) > 1 and d.strip() != "M0,0Z"


def chart_marks(dom: str) -> dict[int, int]:
    """Chart index → marks plotly drew in its plot area (see :class:`_Marks`)."""
    parser = _Marks()
    parser.feed(dom)
    return parser.marks


def _unfilter(kind: int, row: bytearray, prev: bytes, bpp: int) -> None:
    n = len(row)
    if kind == 1:
        for i in range(bpp, n):
            row[i] = (row[i] + row[i - bpp]) & 0xFF
    elif kind == 2:
        row[:] = bytes((a + b) & 0xFF for a, b in zip(row, prev))
    elif kind == 3:
        for i in range(n):
            left = row[i - bpp] if i >= bpp else 0
            row[i] = (row[i] + ((left + prev[i]) >> 1)) & 0xFF
    elif kind == 4:
        for i in range(n):
            a = row[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            row[i] = (row[i] + pred) & 0xFF


def png_colours(png: bytes, max_rows: int = 2000) -> int:
    """Distinct colours in the first ``max_rows`` rows of an 8-bit RGB(A) PNG."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos : pos + 4])
        kind, data = png[pos + 4 : pos + 8], png[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", data[:10])
        elif kind == b"IDAT":
            idat += data
    assert depth == 8 and colour in (2, 6), (depth, colour)
    bpp = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(idat), width * bpp + 1
    prev, seen = bytes(width * bpp), set()
    for y in range(min(height, max_rows)):
        row = bytearray(raw[y * stride + 1 : (y + 1) * stride])
        _unfilter(raw[y * stride], row, prev, bpp)
        seen.update(bytes(row[i : i + bpp]) for i in range(0, len(row), bpp * 7))
        prev = bytes(row)
    return len(seen)
