"""No ``size=``, but the files the job would create are there: fio's sizes.

fio sizes a job without ``size=`` (and without ``filesize=``/``filename=``)
from the files it finds under the names it would give them
(``filename_format`` in ``directory``): each file's real size, their sum
the job's size. Test suites rely on it: openzfs' perf tests lay out
``file$jobnum`` with one job file (mkfiles.fio) and read them with
others that name no size. iolab resolves it here, before the engine sees
the job, into the ``size=`` fio would use, and says so once.

iolab gives every worker the same size, split equally over its files, so
the size is ``nrfiles`` times the smallest file any worker would open: every
worker's regions then lie inside its files. Where the files differ in size
that is less than fio would do for the larger ones; the note names the
smallest. Nothing happens when any of the files is missing (the engine's
"size is required" error stands) or is not a regular file.

``io_size`` with ``filename=`` and no ``size=`` is the same question for
named files (a device, say): fio repeats the I/O over the whole files, so
``size=`` becomes their size here (the smallest, times their number).
"""

from __future__ import annotations

import os
import stat
from typing import Optional

from iolab import _native
from iolab.jobs import JobSpec
from iolab.jobs.percent import _file_bytes as file_bytes
from iolab.jobs.percent import _last  # one reading of 'the option in force' for both

#: fio's default filename_format (also iolab's).
DEFAULT_FORMAT = "$jobname.$jobnum.$filenum"
#: With one of these the job is sized another way, or (offset) the files'
#: sizes alone do not give its region: left to the engine's rules.
_SIZED_OTHERWISE = ("size", "filesize", "filename", "io_size", "io_limit", "offset")
_NO_FILES = tuple(_native.ENGINES_WITHOUT_FILES)


def _count(spec: JobSpec, name: str) -> Optional[int]:
    text = (_last(spec, name) or "1").strip()
    return int(text) if text.isdigit() and int(text) > 0 else None


def file_name(fmt: str, jobname: str, jobnum: int, filenum: int) -> str:
    """fio's file name tokens, as the engine replaces them (``$clientuid`` is
    empty in a local run)."""
    return (
        fmt.replace("$clientuid", "")
        .replace("$jobname", jobname)
        .replace("$jobnum", str(jobnum))
        .replace("$filenum", str(filenum))
    )


def _named_files(spec: JobSpec) -> Optional[list[str]]:
    filename = _last(spec, "filename")
    if not filename:
        return None
    directory = _last(spec, "directory") or ""
    # fio's ':' separates files; '\:' is a colon inside a name.
    names = (p.replace("\0", ":") for p in filename.replace("\\:", "\0").split(":"))
    return [n if os.path.isabs(n) else os.path.join(directory, n) for n in names]


def _file_bytes(path: str) -> Optional[int]:
    try:
        return file_bytes(path)
    except OSError:
        return None


def _io_size_over_named_files(spec: JobSpec) -> tuple[JobSpec, Optional[str]]:
    """``io_size`` with ``filename=`` and no ``size=``: fio repeats the I/O over
    the whole files; iolab's engine needs that region as ``size=``."""
    paths = _named_files(spec)
    if paths is None or any(_last(spec, k) is not None for k in ("size", "filesize", "offset")):
        return spec, None
    sizes = [_file_bytes(p) for p in paths]
    if any(b is None or b == 0 for b in sizes):
        return spec, None  # the engine's own error names what is missing
    smallest = min(b for b in sizes if b is not None)
    size = smallest * len(paths)
    note = (
        f"job {spec.name}: io_size without size=: size={size} bytes, the whole of {', '.join(paths)}, as fio takes it"
    )
    return spec.with_options(("size", str(size))), note


def size_from_existing_files(spec: JobSpec) -> tuple[JobSpec, Optional[str]]:
    """``spec`` with ``size=`` taken from the files it would create, when
    they all exist and no size is given; and the note to show, if any."""
    if _last(spec, "io_size") is not None or _last(spec, "io_limit") is not None:
        return _io_size_over_named_files(spec)
    if any(_last(spec, k) is not None for k in _SIZED_OTHERWISE):
        return spec, None
    if (_last(spec, "ioengine") or "").strip() in _NO_FILES:
        return spec, None
    directory = _last(spec, "directory") or "."
    numjobs, nrfiles = _count(spec, "numjobs"), _count(spec, "nrfiles")
    if ":" in directory or numjobs is None or nrfiles is None:
        return spec, None  # several directories or a count the engine will refuse
    fmt = _last(spec, "filename_format") or DEFAULT_FORMAT
    smallest: Optional[tuple[int, str]] = None
    for jobnum in range(numjobs):
        for filenum in range(nrfiles):
            path = os.path.join(directory, file_name(fmt, spec.name, jobnum, filenum))
            try:
                st = os.stat(path)
            except OSError:
                return spec, None
            if not stat.S_ISREG(st.st_mode) or st.st_size == 0:
                return spec, None
            if smallest is None or st.st_size < smallest[0]:
                smallest = (st.st_size, path)
    assert smallest is not None
    size = smallest[0] * nrfiles
    note = (
        f"job {spec.name}: no size= given; size={size} bytes from the existing files "
        f"(the smallest, {smallest[1]}, is {smallest[0]} bytes), as fio takes it"
    )
    return spec.with_options(("size", str(size))), note
