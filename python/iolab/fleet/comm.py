"""The MPI operations a fleet run uses, over mpi4py.

Two regimes, because MPI alone hangs or aborts when a peer dies:

- **Before the start** every rank is alive and waiting, so collectives are
  safe: broadcast of the plan, gather of host names and prepare outcomes,
  the clock ping-pong (:mod:`iolab.fleet.clock`).
- **From the start on** a rank may die, hang or be cut off at any moment.
  Only non-blocking point-to-point is used: :meth:`World.post` (isend,
  never waited on without a deadline), :meth:`World.receive_any`
  (matched probe ``improbe`` + ``Message.irecv`` polled until a deadline)
  and :meth:`World.drain` (what has arrived; transfers under way are kept
  for the next call), so nothing ever blocks on a peer that is gone.

mpi4py pickles Python objects; what crosses is plain data (dicts of
numbers and strings, JSON text). mpi4py is imported here only, on first
use, so a plain ``iolab run`` never initialises MPI.
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass, field
from typing import Any, Optional

#: Message tags after the start.
TAG_INTERVAL = 11  # rank → 0: one interval snapshot (also the heartbeat)
TAG_FINAL = 12  # rank → 0: the final result
TAG_BEAT = 13  # 0 → rank: rank 0 is alive (and what it knows)
TAG_STOP = 14  # 0 → rank: stop now (a host was lost, or Ctrl-C)
TAG_CLOCK = 15  # ping-pong before the start
TAG_DONE = 16  # 0 → rank: your final result arrived, you may leave

#: How long receive loops sleep between polls: bounds the CPU they take.
POLL_SLEEP_S = 0.002
#: A matched message's transfer may take this long past the caller's
#: deadline: once matched it is no longer queued, so giving up loses it.
COMPLETE_S = 2.0


def _mpi() -> Any:
    from mpi4py import MPI

    return MPI


@dataclass
class World:
    """COMM_WORLD with the rank's host name; sends still in flight are kept
    so they can be tested (and freed) instead of blocking on them."""

    comm: Any
    rank: int
    size: int
    host: str
    _pending: list[Any] = field(default_factory=list)
    #: Test the pending sends when this many are kept: twice as many as the
    #: last test left, so rank 0's beats to N ranks cost O(N) per interval
    #: (testing all of them at every send would be O(N²)).
    _test_at: int = 64
    #: Messages :meth:`drain` matched whose transfer is still under way, per
    #: (tag, sender), in the sender's order.
    _receiving: dict[tuple[int, int], list[Any]] = field(default_factory=dict)

    @classmethod
    def init(cls) -> World:
        mpi = _mpi()
        comm = mpi.COMM_WORLD
        return cls(comm, comm.Get_rank(), comm.Get_size(), socket.gethostname())

    # ---- before the start: collectives (every rank alive) ----

    def bcast(self, value: Any) -> Any:
        return self.comm.bcast(value, root=0)

    def gather(self, value: Any) -> Optional[list[Any]]:
        return self.comm.gather(value, root=0)  # type: ignore[no-any-return]

    def allgather(self, value: Any) -> list[Any]:
        return self.comm.allgather(value)  # type: ignore[no-any-return]

    def send(self, value: Any, dest: int, tag: int) -> None:
        self.comm.send(value, dest=dest, tag=tag)

    def recv(self, source: int, tag: int) -> Any:
        return self.comm.recv(source=source, tag=tag)

    # ---- after the start: non-blocking, under deadlines ----

    def post(self, value: Any, dest: int, tag: int) -> None:
        """Send without waiting for the peer (it may be gone)."""
        self._pending.append(self.comm.isend(value, dest=dest, tag=tag))
        if len(self._pending) >= self._test_at:
            self._pending = [r for r in self._pending if not r.Test()]
            self._test_at = max(64, 2 * len(self._pending))

    def flush(self, deadline: float) -> bool:
        """Wait until every posted send completed or ``deadline``
        (``time.monotonic``); True when all completed."""
        while self._pending:
            self._pending = [r for r in self._pending if not r.Test()]
            if not self._pending:
                break
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL_SLEEP_S)
        return True

    def receive_any(self, tag: int, deadline: float, source: Optional[int] = None) -> Optional[tuple[int, Any]]:
        """The next message with ``tag`` (from ``source`` or anyone) as
        ``(source, value)``, or None once ``deadline`` passes. A message
        whose transfer started completes within the deadline or is given up."""
        mpi = _mpi()
        src = mpi.ANY_SOURCE if source is None else source
        status = mpi.Status()
        while True:
            msg = self.comm.improbe(source=src, tag=tag, status=status)
            if msg is not None:
                sender = status.Get_source()
                req = msg.irecv()
                give_up = max(deadline, time.monotonic() + COMPLETE_S)
                while True:
                    done, value = req.test()
                    if done:
                        return sender, value
                    if time.monotonic() >= give_up:
                        return None  # the sender died mid-transfer
                    time.sleep(POLL_SLEEP_S)
            if time.monotonic() >= deadline:
                return None
            time.sleep(POLL_SLEEP_S)

    def drain(self, tag: int, source: Optional[int] = None) -> list[tuple[int, Any]]:
        """Every message with ``tag`` that has arrived, without waiting. A
        matched message whose transfer is still under way (a message above
        MPI's eager limit moves only as its sender makes progress: up to an
        interval) is kept and returned by a later call, in its sender's
        order: rank 0 never sleeps on one, so a fleet whose snapshots carry
        interval records (``--stream-intervals``) does not fall behind."""
        mpi = _mpi()
        status = mpi.Status()
        src = mpi.ANY_SOURCE if source is None else source
        while (msg := self.comm.improbe(source=src, tag=tag, status=status)) is not None:
            self._receiving.setdefault((tag, status.Get_source()), []).append(msg.irecv())
        got = []
        for (t, sender), requests in self._receiving.items():
            if t != tag or (source is not None and sender != source):
                continue
            while requests:
                done, value = requests[0].test()
                if not done:
                    break
                requests.pop(0)
                got.append((sender, value))
        return got


__all__ = ["TAG_BEAT", "TAG_CLOCK", "TAG_DONE", "TAG_FINAL", "TAG_INTERVAL", "TAG_STOP", "World"]
