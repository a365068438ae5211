"""One option surface (issue 26, item 5): every option iolab accepts — the
engine's table and the options iolab's Python side takes before the engine
(python/iolab/jobs/extras.py) — is listed by ``iolab options`` and in
docs/options.md, and the core never calls one of them unsupported.

The accepted names are found by behaviour, not copied from a table: a name
is accepted when :func:`split_extras` takes it out of a job (the Python
side) or when the core's ``prepare_job`` does not answer "unknown option".
The names tried are the tables' own and, where fio is installed, every
option fio 3.33 knows (``fio --cmdhelp=all``), so an option accepted
outside the tables would be caught too.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any, Callable

from iolab import _native
from iolab.jobs import JobSpec
from iolab.jobs.extras import EXTRA_OPTIONS, split_extras
from peers import require_peer

ROOT = Path(__file__).parents[2]
#: A value every kind of extra accepts or refuses by its value, never by its name.
PROBE_VALUE = "1"


def _taken_by_python(name: str) -> bool:
    try:
        kept, _extras = split_extras(JobSpec("j", ((name, PROBE_VALUE),)))
    except ValueError:
        return True  # refused for its value, so the name is known (choices, text)
    return not kept.options


def _core_says(name: str) -> str:
    """The core's answer to the name: "" when it knows it, else its error."""
    try:
        _native.prepare_job("j", [(name, PROBE_VALUE), ("ioengine", "null"), ("size", "1m")])
    except ValueError as e:
        return str(e) if str(e).startswith(f"unknown option '{name}'") else ""
    return ""


def _table_names() -> set[str]:
    engine = {n for r in _native.option_table() for n in (r["name"], *r["aliases"])}
    return engine | {n for d in EXTRA_OPTIONS for n in (d.name, *d.aliases)}


def _listed(text: str) -> set[str]:
    """Names (and aliases) of `iolab options`' plain listing."""
    out = set()
    for line in text.splitlines():
        m = re.match(r"([a-z0-9_]+)(?: \(alias ([^)]*)\))?  \[", line)
        if m:
            out.add(m.group(1))
            out.update(a.strip() for a in (m.group(2) or "").split(",") if a.strip())
    return out


def _documented(text: str) -> set[str]:
    """Names and aliases in the Markdown tables' first two columns."""
    out = set()
    for line in text.splitlines():
        cells = line.split("|")
        if len(cells) > 3 and cells[1].strip().startswith("`"):
            out.update(re.findall(r"`([a-z0-9_]+)`", cells[1] + cells[2]))
    return out


def _check(names: set[str], cli: Callable[..., Any]) -> None:
    accepted = {n for n in names if _taken_by_python(n) or not _core_says(n)}
    python_side = {n for n in names if _taken_by_python(n)}
    assert python_side, "the Python side takes no option: the probe is broken"
    r = cli("options")
    assert r.exit_code == 0, r.output
    assert sorted(accepted - _listed(r.stdout)) == []
    md = cli("options", "--markdown")
    assert sorted(accepted - _documented(md.stdout)) == []
    assert sorted(accepted - _documented((ROOT / "docs" / "options.md").read_text())) == []
    # The core does not call an option the Python side applies "not supported".
    assert sorted(n for n in python_side if "not supported by iolab" in _core_says(n)) == []


def test_every_option_the_tables_name_is_accepted_listed_and_documented(cli: Callable[..., Any]) -> None:
    names = _table_names()
    assert all(_taken_by_python(n) or not _core_says(n) for n in names)
    _check(names, cli)


def test_every_fio_option_iolab_accepts_is_listed_and_documented(cli: Callable[..., Any]) -> None:
    fio = require_peer("fio")
    helptext = subprocess.run([fio, "--cmdhelp=all"], capture_output=True, text=True, check=True).stdout
    fio_names = set(re.findall(r"^\s*([a-z0-9_]+)\s+:", helptext, re.MULTILINE))
    assert len(fio_names) > 150, helptext[:500]
    _check(fio_names, cli)


def test_arithmetic_in_a_time_is_microseconds_for_every_time_option() -> None:
    # fio: an expression in a time option is in µs — ss_dur (Python side) as startdelay (engine).
    from iolab.jobs import parse_fio_args

    (job,) = parse_fio_args(["--name=a", "--startdelay=(500*2)", "--ss_dur=(30*1000000)", "--ss=iops:10%"])
    options = dict(job.options)
    assert options["startdelay"] == "1000us" and options["ss_dur"] == "30000000us"
    _, extras = split_extras(job)
    assert extras.get("steadystate_duration") == 30 * 10**9  # 30 s, not 30,000,000 s
