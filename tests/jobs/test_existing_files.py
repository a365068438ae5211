"""Jobs sized by the files already there, and formats without ``$filenum``:
fio's rules for the files a job would create."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from iolab.jobs import JobSpec
from iolab.jobs.existing import size_from_existing_files

DATA = Path(__file__).parent / "data" / "existing"


def _fio_json(cli: Callable[..., Any], *args: str) -> tuple[dict[str, Any], str]:
    r = cli("run", *args, "--output-format=fio-json")
    assert r.exit_code == 0, r.output
    return dict(json.loads(r.stdout)), str(r.stderr)


def test_no_size_reads_the_files_another_job_laid_out(cli: Callable[..., Any], workdir: Path) -> None:
    made, _ = _fio_json(cli, str(DATA / "make-sets.fio"))
    assert sum(j["write"]["io_bytes"] for j in made["jobs"]) == 2 * 256 * 1024
    assert sorted(p.name for p in workdir.iterdir() if p.name.startswith("set")) == ["set0", "set1"]

    doc, err = _fio_json(cli, str(DATA / "read-sets.fio"))
    assert "no size= given; size=1048576 bytes from the existing files" in err
    assert "has no $filenum" in err and "opened 4 times" in err
    # Each worker: its file opened 4 times, each open reading the whole 256 KiB file once.
    assert [j["read"]["io_bytes"] for j in doc["jobs"]] == [1 << 20, 1 << 20]
    assert [j["read"]["total_ios"] for j in doc["jobs"]] == [64, 64]
    assert (workdir / "set0").stat().st_size == 256 * 1024, "reading changed no file"


def test_without_the_files_size_is_still_required(cli: Callable[..., Any], workdir: Path) -> None:
    r = cli("run", str(DATA / "read-sets.fio"), "--parse-only")
    assert r.exit_code != 0
    assert "size" in r.output and "required" in r.output


def test_one_missing_file_or_a_given_size_leaves_the_job_alone(tmp_path: Path) -> None:
    spec = JobSpec("j", (("directory", str(tmp_path)), ("numjobs", "2"), ("filename_format", "f$jobnum")))
    (tmp_path / "f0").write_bytes(b"x" * 8192)
    assert size_from_existing_files(spec) == (spec, None)  # f1 is missing
    (tmp_path / "f1").write_bytes(b"x" * 4096)
    sized, note = size_from_existing_files(spec)
    assert sized.options[-1] == ("size", "4096"), "the smallest file decides"
    assert note is not None and "f1" in note
    given = spec.with_options(("size", "1k"))
    assert size_from_existing_files(given) == (given, None)


def test_a_format_without_filenum_writes_one_file(cli: Callable[..., Any], workdir: Path) -> None:
    doc, err = _fio_json(
        cli,
        "--name=w",
        "--ioengine=psync",
        "--rw=write",
        "--bs=4k",
        "--size=16k",
        "--nrfiles=4",
        "--filename_format=one.dat",
    )
    assert "opened 4 times" in err
    assert doc["jobs"][0]["write"]["io_bytes"] == 16 * 1024
    # fio's rule: four opens of one file, each a region of size/nrfiles from its start.
    assert [p.name for p in workdir.iterdir() if p.suffix == ".dat"] == ["one.dat"]
    assert (workdir / "one.dat").stat().st_size == 4096


def test_io_size_repeats_over_a_named_file_without_size(cli: Callable[..., Any], workdir: Path) -> None:
    (workdir / "dev.img").write_bytes(bytes(64 * 1024))
    doc, err = _fio_json(
        cli, "--name=r", "--ioengine=psync", "--rw=read", "--bs=4k", "--filename=dev.img", "--io_size=256k"
    )
    assert "io_size without size=: size=65536 bytes, the whole of dev.img" in err
    # fio's meaning: the whole file is the region, read over four times.
    assert doc["jobs"][0]["read"]["io_bytes"] == 256 * 1024
    assert doc["jobs"][0]["read"]["total_ios"] == 64
