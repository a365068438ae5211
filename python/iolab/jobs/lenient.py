"""Sizes written with something after the unit, read as fio reads them.

fio reads a size as the number at its start and a unit from the letters
right after it, and drops the rest without a word: its unit scan stops at
``:``, ``-``, ``,`` or ``/`` and compares by prefix (``parse.c``,
``__get_mult_bytes``). So ``bs=4k-512k`` (meant as a range) runs at 4 KiB,
and ``size=64mG`` (a typo) is 64 MiB. Real job files carry both
(spdk's vhost jobs, xfstests' perf/001), and they run under fio, so iolab
reads them the same way and says once, on stderr, what it read: the user
learns that fio never ran the range they wrote.

Only a value that iolab's own size parser refuses is looked at, and only
when it starts with a whole number and a complete unit (``k``, ``kb``,
``KiB``... as in :mod:`iolab._native` ``parse_size``); fractions (``1.5k``,
which fio reads as 1), a sign and unknown letters stay
errors, because there fio's reading is a silent misreading, not a typo
with one obvious meaning. The unit takes the job's ``kb_base`` as in fio.

Hand-written: this is fio's own parsing quirk; no library reproduces it.
"""

from __future__ import annotations

import functools
import re
from typing import Optional

from iolab import _native
from iolab.jobs import JobSpec

#: A whole number, then a complete unit, then something fio ignores.
_SIZE_WITH_TAIL = re.compile(r"(\d+)((?:[kmgtp]ib|[kmgtp]i|[kmgtp]b?))(.+)", re.IGNORECASE)
#: A bare IEC prefix (``4Gi``, ``16Ki``): fio 3.33 reads it as the kb_base
#: unit (``4g``), while its manual lists ``Ki`` with the powers of 1000.
_BARE_IEC = re.compile(r"(\d+)([kmgtp])i", re.IGNORECASE)


@functools.lru_cache(maxsize=1)
def _size_options() -> dict[str, bool]:
    """Every spelling of a size option → whether it takes ``read,write`` pairs."""
    out: dict[str, bool] = {}
    for row in _native.option_table():
        kind = row["type"]
        if kind in ("size", "size[,size]"):
            for name in (row["name"], *row["aliases"]):
                out[name] = kind == "size[,size]"
    return out


def _kb_base(spec: JobSpec) -> int:
    value = "1024"
    for key, v in spec.options:
        if key == "kb_base" and v is not None:
            value = v.strip()
    return 1000 if value == "1000" else 1024


def _strict_ok(text: str, kb_base: int, key: str) -> bool:
    if not text or text.endswith("%"):
        return True  # empty halves and percentages are other code's business
    try:
        _native.parse_size(text, kb_base)
        return True
    except ValueError:
        pass
    if key == "filesize" and "-" in text:  # filesize takes a range lo-hi
        return all(_strict_ok(p.strip(), kb_base, "") for p in text.split("-", 1))
    return False


def fio_reading(text: str, kb_base: int) -> Optional[int]:
    """The bytes fio reads ``text`` as when a complete unit is followed by
    more text (``4k-512k`` → 4096, ``64mG`` → 64 MiB); None otherwise."""
    m = _SIZE_WITH_TAIL.fullmatch(text.strip())
    if m is None:
        return None
    # The head is a whole number and a complete unit: the engine's own parser reads it.
    return _native.parse_size(m.group(1) + m.group(2), kb_base)


def _bare_iec_note(key: str, part: str, kb_base: int) -> str:
    m = _BARE_IEC.fullmatch(part)
    assert m is not None
    plain = m.group(1) + m.group(2).lower()
    return (
        f"{key}={part}: read as {_native.parse_size(part, kb_base)} bytes ({plain}, powers of kb_base={kb_base}), "
        f"as fio 3.33 computes it; fio's manual lists '{m.group(2).upper()}i' with the powers of 1000 — "
        f"write {plain} to say the same without the doubt"
    )


def read_sizes_as_fio(spec: JobSpec) -> tuple[JobSpec, list[str]]:
    """``spec`` with sizes that only fio's lenient parser accepts replaced by
    the bytes fio reads, and one note per value saying so. A bare IEC prefix
    (``4Gi``) is kept and noted: fio and its manual disagree on it."""
    sizes = _size_options()
    kb_base = _kb_base(spec)
    notes: list[str] = []
    out = []
    for key, value in spec.options:
        if value is not None and key in sizes:
            parts = value.split(",") if sizes[key] else [value]
            for i, part in enumerate(parts):
                part = part.strip()
                if _BARE_IEC.fullmatch(part):
                    notes.append(_bare_iec_note(key, part, kb_base))
                if _strict_ok(part, kb_base, key):
                    continue
                nbytes = fio_reading(part, kb_base)
                if nbytes is None:
                    continue  # the engine's parser reports it
                m = _SIZE_WITH_TAIL.fullmatch(part)
                assert m is not None
                hint = f"; for a range write bsrange={part}" if key in ("bs", "blocksize") and "-" in part else ""
                notes.append(
                    f"{key}={value}: read '{part}' as {nbytes} bytes ({m.group(1)}{m.group(2)}), as fio does: "
                    f"fio ignores '{m.group(3)}' after the unit{hint}"
                )
                parts[i] = str(nbytes)
            value = ",".join(parts)
        out.append((key, value))
    return JobSpec(spec.name, tuple(out), spec.origins), notes
