"""Sizes with text after the unit (``bs=4k-512k``, ``size=64mG``) are read as
fio reads them — the number and its unit, the rest dropped — with a note
saying what was read; fractions, signs and unknown units stay errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest
from iolab.jobs import JobSpec
from iolab.jobs.lenient import fio_reading, read_sizes_as_fio

TYPO = Path(__file__).parent / "data" / "compat" / "typo-sizes.fio"


@pytest.mark.parametrize(
    ("text", "kb_base", "expected"),
    [
        ("4k-512k", 1024, 4096),
        ("64mG", 1024, 64 << 20),
        ("2k-64k", 1000, 2000),
        ("1MiB/x", 1000, 1 << 20),  # IEC spelling takes the other base, as in fio
        ("1MiB/x", 1024, 1000**2),
        ("8kb:junk", 1024, 8192),
        ("1.5k", 1024, None),  # fio reads 1: a misreading, not a typo
        ("1kix", 1024, 1024),  # fio reads the bare prefix as k and drops the rest
        ("4Gi-8Gi", 1024, 4 << 30),
        ("-4k-8k", 1024, None),
        ("4x", 1024, None),
        ("4k", 1024, None),  # nothing after the unit: not this module's case
    ],
)
def test_fio_reading(text: str, kb_base: int, expected: int | None) -> None:
    assert fio_reading(text, kb_base) == expected


def test_only_values_the_strict_parser_refuses_are_rewritten() -> None:
    spec = JobSpec("j", (("bs", "4k,8k-16k"), ("filesize", "1m-2m"), ("size", "64mG"), ("rw", "write")))
    out, notes = read_sizes_as_fio(spec)
    assert out.options == (("bs", "4k,8192"), ("filesize", "1m-2m"), ("size", str(64 << 20)), ("rw", "write"))
    assert len(notes) == 2
    assert "bs=4k,8k-16k: read '8k-16k' as 8192 bytes (8k), as fio does" in notes[0]
    assert "bsrange=8k-16k" in notes[0]


def test_typo_sizes_run_with_fios_reading(cli: Callable[..., Any], workdir: Path) -> None:
    r = cli("run", str(TYPO), "--output-format=fio-json")
    assert r.exit_code == 0, r.output
    assert "note: bs=2k-64k: read '2k-64k' as 2000 bytes (2k), as fio does" in r.stderr
    assert "note: size=1mM: read '1mM' as 1000000 bytes (1m), as fio does" in r.stderr
    jobs = {j["jobname"]: j["write"] for j in json.loads(r.stdout)["jobs"]}
    # kb_base=1000: 128k = 128000 bytes in 2000-byte blocks; 1m = 1000000 bytes in 4000-byte blocks.
    assert jobs["range-in-bs"]["io_bytes"] == 128_000
    assert jobs["range-in-bs"]["total_ios"] == 64
    assert jobs["doubled-unit"]["io_bytes"] == 1_000_000
    assert jobs["doubled-unit"]["total_ios"] == 250
    assert (workdir / "compat-typo-2.dat").stat().st_size == 1_000_000


def test_garbage_stays_an_error(cli: Callable[..., Any], workdir: Path) -> None:
    r = cli("run", "--name=j", "--filename=x.dat", "--size=1.5m", "--parse-only")
    assert r.exit_code != 0
    assert "1.5m" in r.output


@pytest.mark.parametrize(("text", "kb_base", "nbytes"), [("4Gi", 1024, 4 << 30), ("16Ki", 1000, 16000)])
def test_a_bare_iec_prefix_is_kept_and_noted(text: str, kb_base: int, nbytes: int) -> None:
    """fio 3.33 reads ``4Gi`` as ``4g`` (a power of kb_base); its manual says
    a power of 1000. The value is kept (the engine reads it as fio does) and
    the note names both readings."""
    spec = JobSpec("j", (("kb_base", str(kb_base)), ("size", text)))
    out, notes = read_sizes_as_fio(spec)
    assert out.options == spec.options
    assert len(notes) == 1 and f"read as {nbytes} bytes" in notes[0] and "manual" in notes[0], notes
