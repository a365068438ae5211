"""Rank 0 during the run: its own engine, the live view, the watchdog and
the final gather.

Every interval rank 0 takes its own snapshot and, a fraction of an
interval later (:data:`VIEW_WAIT`), shows the cluster with what has
arrived: a host whose snapshot is not there is shown late (``-``) and
named; the view never waits for it. Any message from a rank (snapshot or
final result) proves it alive; a rank silent for two intervals plus the
stated deadline is declared lost: rank 0 names it, stops its own engine,
tells every other rank to stop (``TAG_STOP``), gathers what they have,
and the run ends incomplete. Rank 0 also sends each rank a heartbeat
every interval so the ranks can watch it in turn.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any, Callable, Optional

from iolab.fleet.comm import TAG_BEAT, TAG_DONE, TAG_FINAL, TAG_INTERVAL, TAG_STOP, World
from iolab.fleet.live import ClusterInterval, HostRow, total_of
from iolab.fleet.parts import FleetConfig, HostPart, Snapshotter, final_of
from iolab.fleet.spool import Spool
from iolab.fleet.streamlog import FleetLog
from iolab.fleet.tail import LogTail
from iolab.run.local import POLL_S, RunLike

#: The view of interval k is drawn this many intervals after the snapshots were due.
VIEW_WAIT = 0.35
#: Views (gather aside: merge and draw) taking more than this share of the
#: interval :data:`SLOW_VIEWS` times in a row are noted once, with the
#: interval that would keep them within (one stall of a loaded machine is not).
VIEW_BUDGET = 0.5
SLOW_VIEWS = 3


class Watch:
    def __init__(
        self,
        world: World,
        run: RunLike,
        cfg: FleetConfig,
        snap: Snapshotter,
        spool: Spool,
        labels: Sequence[str],
        on_view: Optional[Callable[[ClusterInterval], None]] = None,
        note: Callable[[str], None] = lambda _line: None,
        streams: tuple[Optional[LogTail], Optional[FleetLog]] = (None, None),
    ) -> None:
        self.world, self.run_, self.cfg, self.snap, self.spool = world, run, cfg, snap, spool
        #: ``--stream-intervals``: rank 0's own log, read as it grows, and the fleet's merged log.
        self.tail, self.fleet_log = streams
        self.labels = list(labels)
        self.on_view = on_view
        self.note = note
        now = time.monotonic()
        self.last_seen = {r: now for r in range(1, world.size)}
        self.parts = {r: HostPart(r, labels[r]) for r in range(world.size)}
        self.finals: dict[int, dict[str, Any]] = {}
        self.lost: set[int] = set()
        self.snapshots: dict[int, dict[int, dict[str, Any]]] = {}  # seq → rank → snapshot
        self.faults: list[str] = []
        self.interrupted = False
        self.own_done = False
        self.shown_seq = 0
        self.stopping = False
        self.slow_noted = False
        self.slow_views = 0
        self._settle_by: Optional[float] = None
        #: The clock views are timed by (a test gives its own).
        self.clock: Callable[[], float] = time.monotonic

    # ---- the loop ----

    def run(self) -> tuple[list[HostPart], list[str], bool]:
        while True:
            try:
                self._step()
            except KeyboardInterrupt:
                if self.interrupted:
                    raise
                self.interrupted = True
                self.note("interrupted: stopping every rank (Ctrl-C again to give up)")
                self._stop_all()
            if self.own_done and all(r in self.finals or r in self.lost for r in self.last_seen):
                if self._log_settled():
                    break
        if self.fleet_log is not None:
            self.fleet_log.close()
        for r in self.finals:
            self.world.post(None, r, TAG_DONE)
        self.world.flush(time.monotonic() + 5.0)
        self.spool.close()
        return [self.parts[r] for r in sorted(self.parts)], self.faults, self.interrupted

    def _log_settled(self) -> bool:
        """Every final result is in: the fleet log still waits for snapshots
        that a final overtook (MPI orders messages per tag), for at most the
        silence limit; a rank whose parts never came is then left as it is."""
        if self.fleet_log is None or not self.fleet_log.waiting():
            return True
        now = time.monotonic()
        if self._settle_by is None:
            self._settle_by = now + self.cfg.silence_limit_s
        if now < self._settle_by:
            return False
        for r in self.fleet_log.waiting():
            self.fleet_log.rank_done(r)
        return True

    def _step(self) -> None:
        now = time.monotonic()
        if not self.own_done:
            progress = self.run_.poll(self.snap.poll_timeout_s(POLL_S))
            if self.snap.due(time.monotonic()):
                s = self.snap.take(progress, now)
                self.spool.write("interval", s)
                self._store(0, s if self.tail is None else {**s, "log": self.tail.read()})
                for r in self.last_seen:
                    if r not in self.finals and r not in self.lost:
                        self.world.post(None, r, TAG_BEAT)
            if self.run_.finished():
                self._own_final()
        else:
            time.sleep(POLL_S / 5)
            if self.snap.due(time.monotonic()):  # keep the ranks' watchdogs fed
                self.snap.seq += 1
                self.snap.next_at += self.snap.interval_s
                for r in self.last_seen:
                    if r not in self.finals and r not in self.lost:
                        self.world.post(None, r, TAG_BEAT)
        self.gather()
        self._show_due()
        self._watchdog()

    def gather(self) -> None:
        """Every snapshot and final result that has arrived, without waiting."""
        for r, s in self.world.drain(TAG_INTERVAL):
            self.last_seen[r] = time.monotonic()
            self._store(r, s)
        for r, f in self.world.drain(TAG_FINAL):
            self.last_seen[r] = time.monotonic()
            self.finals[r] = f
            self._take_final(r, f)

    def _store(self, rank: int, s: dict[str, Any]) -> None:
        got = s.pop("log", None)
        if self.fleet_log is not None:
            self.fleet_log.add(rank, got)
        self.snapshots.setdefault(int(s["seq"]), {})[rank] = s
        self.parts[rank].last_snapshot = s

    def _own_final(self) -> None:
        self.own_done = True
        f = final_of(self.run_)
        self.spool.write("final", f)
        if self.tail is not None:
            f["log"] = self.tail.read()  # the engine has closed its log: the rest of it
        self._take_final(0, f)

    def _take_final(self, rank: int, f: dict[str, Any]) -> None:
        got = f.pop("log", None)
        if self.fleet_log is not None:
            self.fleet_log.add(rank, got, last=True)
        p = self.parts[rank]
        p.result_json = f.get("result_json")
        p.error = f.get("error")
        if p.error is not None:
            p.state = "failed"
            self.faults.append(f"{p.host} (rank {rank}): its run ended early on an error: {p.error}")

    # ---- the live view ----

    def _show_due(self) -> None:
        due_seq = self.snap.seq
        if due_seq <= self.shown_seq:
            return
        # Snapshot k is due at start + (k + 0.15) intervals; draw it VIEW_WAIT later.
        draw_at = self.snap.next_at - self.snap.interval_s + VIEW_WAIT * self.snap.interval_s
        if time.monotonic() < draw_at:
            return
        self.shown_seq = due_seq
        self.draw(due_seq)

    def draw(self, seq: int) -> None:
        """The view of interval ``seq`` to ``on_view``; views that take more
        than :data:`VIEW_BUDGET` of the interval :data:`SLOW_VIEWS` times
        in a row are noted, once (rank 0 also runs its own engine and
        watches every rank meanwhile)."""
        t0 = self.clock()
        view = self.view(seq)
        if self.on_view is not None:
            self.on_view(view)
        took = self.clock() - t0
        budget = VIEW_BUDGET * self.snap.interval_s
        self.slow_views = self.slow_views + 1 if took > budget else 0
        if self.slow_views == SLOW_VIEWS and not self.slow_noted:
            self.slow_noted = True
            self.note(
                f"iolab: the live view of {len(view.rows)} hosts took {took:.2f} s of the "
                f"{self.snap.interval_s:g} s interval; --interval {math.ceil(took / VIEW_BUDGET)}s or more keeps it within"
            )

    def view(self, seq: int) -> ClusterInterval:
        got = self.snapshots.get(seq, {})
        rows = []
        for r in range(self.world.size):
            s = got.get(r)
            if s is None:
                rows.append(HostRow(self.labels[r], r, late=True, lost=r in self.lost))
            else:
                rows.append(HostRow(**s["row"]))
        elapsed = max((int(s.get("elapsed_ns", 0)) for s in got.values()), default=0)
        self.snapshots = {k: v for k, v in self.snapshots.items() if k > seq}
        return ClusterInterval(seq, elapsed, tuple(rows), total_of(rows))

    # ---- faults ----

    def _watchdog(self) -> None:
        now = time.monotonic()
        for r, seen in self.last_seen.items():
            if r in self.finals or r in self.lost:
                continue
            silent = now - seen
            if silent > self.cfg.silence_limit_s:
                self.lost.add(r)
                if self.fleet_log is not None:
                    self.fleet_log.rank_done(r)
                p = self.parts[r]
                p.state = "lost"
                msg = (
                    f"{p.host} (rank {r}) lost: no message for {silent:.1f} s (limit: 2 intervals + "
                    f"{self.cfg.deadline_s:g} s deadline = {self.cfg.silence_limit_s:.1f} s); its results up to "
                    f"then stay in its spool on that host"
                )
                self.faults.append(msg)
                self.note(f"iolab: {msg}; stopping every rank")
                self._stop_all()

    def _stop_all(self) -> None:
        if self.stopping:
            return
        self.stopping = True
        self.run_.stop()
        for r in self.last_seen:
            if r not in self.lost and r not in self.finals:
                self.world.post(None, r, TAG_STOP)
