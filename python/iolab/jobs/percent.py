"""``size=50%`` and ``offset=25%``: fio's sizes as a share of the file or device.

fio reads a percentage as that share of the real size of the job's files
(a block device's capacity, a regular file's length). iolab resolves it
here, before the job reaches the engine, into bytes: the files must exist,
because a share of a file iolab is about to create has no meaning. With
several files the smallest one decides (each file gets the same region).
An offset is aligned down to 4 KiB so that O_DIRECT jobs stay aligned
(fio aligns it to the block size; 4 KiB is a multiple of every
sector size and of 4k block sizes, and the engine still checks alignment).
"""

from __future__ import annotations

import os
from typing import Optional

from iolab.jobs import JobSpec, ParseError

#: Alignment of a resolved offset (bytes).
OFFSET_ALIGN = 4096


def _last(spec: JobSpec, name: str) -> Optional[str]:
    value = None
    for k, v in spec.options:
        if k == name:
            value = v
    return value


def _file_bytes(path: str) -> int:
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.lseek(fd, 0, os.SEEK_END)  # also a block device's capacity
    finally:
        os.close(fd)


def _smallest_file(spec: JobSpec, written: str) -> int:
    filename = _last(spec, "filename")
    if not filename:
        raise ParseError(
            f"job {spec.name}", None, f"{written}: a percentage needs filename= naming existing files or devices"
        )
    directory = _last(spec, "directory") or ""
    sizes = []
    for name in (p.replace("\0", ":") for p in filename.replace("\\:", "\0").split(":")):
        path = name if os.path.isabs(name) else os.path.join(directory, name)
        try:
            sizes.append(_file_bytes(path))
        except OSError as e:
            raise ParseError(
                f"job {spec.name}", None, f"{written}: cannot size {path} for the percentage: {e.strerror}"
            ) from None
    return min(sizes)


def resolve_percentages(spec: JobSpec) -> JobSpec:
    """``spec`` with ``size``/``offset`` percentages replaced by bytes."""
    out = []
    for key, value in spec.options:
        if key in ("size", "offset") and value is not None and value.strip().endswith("%"):
            written = f"{key}={value}"
            try:
                pct = float(value.strip()[:-1])
            except ValueError:
                raise ParseError(f"job {spec.name}", None, f"{written}: expected a number before '%'") from None
            if not 0 < pct <= 100:
                raise ParseError(f"job {spec.name}", None, f"{written}: a percentage from 0 (excluded) to 100")
            nbytes = int(_smallest_file(spec, written) * pct / 100)
            if key == "offset":
                nbytes -= nbytes % OFFSET_ALIGN
            value = str(nbytes)
        out.append((key, value))
    return JobSpec(spec.name, tuple(out), spec.origins)
