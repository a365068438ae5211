"""Peers (fio, nbdkit, ...) that some tests run side by side with iolab.

A test that needs a peer calls ``require_peer("fio")``: on a user's machine
without it the test is skipped (saying how to install it); under CI=true a
missing peer is a failure, because CI installs every peer through
``./dev.sh`` and a skip there would hide a broken set-up.
"""

from __future__ import annotations

import os
import shutil

import pytest

INSTALL_HINT = {
    "fio": "apt-get install fio (or ./dev.sh setup as root)",
    "nbdinfo": "apt-get install libnbd-bin",
    "nbdsh": "apt-get install python3-libnbd (nbdsh) and libnbd-bin",
    "qemu-io": "apt-get install qemu-utils",
    "nbdkit": "apt-get install nbdkit",
    "chromium": "apt-get install chromium (or ./dev.sh setup as root)",
    "ip": "apt-get install iproute2",
    "tc": "apt-get install iproute2",
    "prometheus": "apt-get install prometheus (or ./dev.sh setup as root)",
    "promtool": "apt-get install prometheus (or ./dev.sh setup as root)",
    "blkparse": "apt-get install blktrace (or ./dev.sh setup as root)",
}


def require_peer(name: str) -> str:
    """Return the peer's path, or skip (fail under CI=true) when it is missing."""
    path = shutil.which(name)
    if path:
        return path
    msg = f"peer '{name}' not found; install it: {INSTALL_HINT.get(name, name)}"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(msg + " (CI=true: a missing peer is a failure)")
    pytest.skip(msg)
