"""``iolab lab wire``: seed 000 (SMB Direct: client, server and wire
latency; scaling; c/B; the bottleneck) as one command. See :mod:`.run`."""

from iolab.lab.wire.run import WireSettings, run_lab
from iolab.lab.wire.topology import Link

__all__ = ["Link", "WireSettings", "run_lab"]
