"""An iolab target on a private socket for the PTS tests; its lifetime ends with the test."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from iolab import _native


@contextmanager
def served_target(tmp_path: Path, **exports: str) -> Iterator[tuple[dict[str, str], Any]]:
    """Serve ``name=spec`` exports; yields each export's NBD URI and the target (its stats)."""
    sock = tmp_path / "pts.sock"
    target = _native.Target(exports=[f"{k}={v}" for k, v in exports.items()], listen=f"unix:{sock}")
    target.start()
    try:
        yield {k: f"nbd+unix:///{k}?socket={sock}" for k in exports}, target
    finally:
        target.shutdown()
        target.wait()


@contextmanager
def served(tmp_path: Path, **exports: str) -> Iterator[dict[str, str]]:
    """Serve ``name=spec`` exports; yields each export's NBD URI."""
    with served_target(tmp_path, **exports) as (uris, _target):
        yield uris
