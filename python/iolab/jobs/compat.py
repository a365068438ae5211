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


def compat_markdown() -> str:
    intro = (
        "\n## fio options handled around the engine\n\n"
        "These options are taken by iolab's Python side before the job reaches the engine "
        "(`python/iolab/jobs/extras.py`); `iolab options` lists the engine's.\n\n"
    )
    return intro + extras_markdown() + "\n" + HAND_WRITTEN.read_text()
