"""The fio-compatibility part of docs/options.md.

``iolab docs`` appends :func:`compat_markdown` to the option table: the
table of options handled around the engine (from
:data:`iolab.jobs.extras.EXTRA_OPTIONS`, so it cannot drift), then the
hand-written ``fio_compat.md`` beside this module (where iolab deliberately
differs from fio, one line each, and the survey of fio's examples/).
"""

from __future__ import annotations

from pathlib import Path

from iolab.jobs.extras import extras_markdown

HAND_WRITTEN = Path(__file__).with_name("fio_compat.md")


#: What ``iolab options`` prints before the options handled around the engine.
EXTRAS_HEADING = "fio options handled around the engine"


def extras_section() -> str:
    """The Markdown section of the options handled around the engine
    (``iolab options --markdown`` and docs/options.md)."""
    intro = (
        f"\n## {EXTRAS_HEADING}\n\n"
        "These options are taken by iolab's Python side before the job reaches the engine "
        "(`python/iolab/jobs/extras.py`): `iolab run`, `iolab.run()` and sweep points apply them. "
        "`iolab options` lists them after the engine's; booleans, whole numbers and times are read "
        "by the same parsers as the engine's options.\n\n"
    )
    return intro + extras_markdown()


def compat_markdown() -> str:
    return extras_section() + "\n" + HAND_WRITTEN.read_text()
