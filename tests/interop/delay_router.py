"""A delaying TCP relay: the "router" between two network namespaces when
the kernel has no ``sch_netem`` (this workplace's kernels are built
without it, so ``tc qdisc ... netem`` answers "Specified qdisc kind is
unknown").

Usage (run inside the router namespace)::

    python delay_router.py LISTEN_HOST:PORT UPSTREAM_HOST:PORT UP_DELAY_NS DOWN_DELAY_NS [...more quads]

Every chunk read from one side is written to the other no earlier than
its arrival plus that direction's delay (``UP`` = client → server), in
order — what netem does to packets, applied to the byte stream. Arrival
is the kernel's receive time (``SO_TIMESTAMPNS``), not when this process
got to read it: on a loaded machine a thread holding the GIL can be
preempted for a time slice, and the hold would start that much late. Waits
sleep until shortly before the due time and spin the rest, so the hold
ends within a few µs of the delay (a plain sleep comes back tens of µs
late on a busy VM, which would read as wire latency). Prints
``listening`` once every listener is up; runs until killed. On SIGTERM it
prints one JSON line before it exits: per direction that holds chunks
(``up``, ``down``), how many it held and how late after its due time (its
arrival plus the delay) the 75th percentile of them was written, ns
(``{"up": {"held": N, "late_ns_p75": L}, ...}``) — on a loaded machine
the sender waits for a CPU past its spin, and the test must tell that
lateness of its own apparatus from the wire latency it measures.

Written for the wire-latency test only; not part of iolab.
"""

from __future__ import annotations

import collections
import json
import signal
import socket
import struct
import sys
import threading
import time

#: Spin the last stretch of each hold rather than trusting sleep's wake-up.
SPIN_NS = 150_000


#: ``SO_TIMESTAMPNS`` (asm-generic, x86-64 and arm64; Python names it not):
#: each read comes with the kernel's receive time, CLOCK_REALTIME.
SO_TIMESTAMPNS = 35

#: How late each held chunk went out after its due time, ns, by direction.
LATE_NS: dict[str, list[int]] = {"up": [], "down": []}


def _hold_until(due_ns: int) -> None:
    left = due_ns - time.monotonic_ns()
    if left > SPIN_NS:
        time.sleep((left - SPIN_NS) / 1e9)
    while time.monotonic_ns() < due_ns:
        pass


def _report(*_: object) -> None:
    """Print each direction's held chunks and their lateness's p75, then exit."""
    out = {}
    for direction, late in LATE_NS.items():
        if late:
            s = sorted(late)
            out[direction] = {"held": len(s), "late_ns_p75": s[min(len(s) - 1, (3 * len(s)) // 4)]}
    print(json.dumps(out), flush=True)
    sys.exit(0)


def _pump(src: socket.socket, dst: socket.socket, delay_ns: int, direction: str) -> None:
    """Copy src → dst, each chunk held ``delay_ns`` after it arrived."""
    queue: collections.deque[tuple[int, bytes]] = collections.deque()
    ready = threading.Condition()

    def sender() -> None:
        while True:
            with ready:
                while not queue:
                    ready.wait()
                due_ns, data = queue.popleft()
            if not data:
                dst.shutdown(socket.SHUT_WR)
                return
            _hold_until(due_ns)
            dst.sendall(data)
            if delay_ns:
                LATE_NS[direction].append(time.monotonic_ns() - due_ns)

    t = threading.Thread(target=sender, daemon=True)
    t.start()
    src.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    while True:
        try:
            data, anc, _, _ = src.recvmsg(1 << 20, socket.CMSG_SPACE(16))
        except OSError:
            data, anc = b"", []
        now_ns = time.monotonic_ns()
        # How long ago the kernel received it (0 when it gave no time).
        ago_ns = 0
        for level, kind, ts in anc:
            if (level, kind) == (socket.SOL_SOCKET, SO_TIMESTAMPNS):
                sec, nsec = struct.unpack("qq", ts[:16])
                ago_ns = max(0, time.time_ns() - (sec * 10**9 + nsec))
        with ready:
            queue.append((now_ns - ago_ns + delay_ns, data))
            ready.notify()
        if not data:
            break
    t.join()


def _serve(listen: str, upstream: str, up_ns: int, down_ns: int, started: threading.Barrier) -> None:
    host, port = listen.rsplit(":", 1)
    uhost, uport = upstream.rsplit(":", 1)
    srv = socket.create_server((host, int(port)))
    started.wait()
    while True:
        client, _ = srv.accept()
        server = socket.create_connection((uhost, int(uport)))
        for s in (client, server):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=_pump, args=(client, server, up_ns, "up"), daemon=True).start()
        threading.Thread(target=_pump, args=(server, client, down_ns, "down"), daemon=True).start()


def main(argv: list[str]) -> None:
    if not argv or len(argv) % 4:
        sys.exit("usage: delay_router.py LISTEN UPSTREAM UP_DELAY_NS DOWN_DELAY_NS [...]")
    # A spinning sender must not hold the GIL for the default 5 ms.
    sys.setswitchinterval(20e-6)
    signal.signal(signal.SIGTERM, _report)
    quads = [argv[i : i + 4] for i in range(0, len(argv), 4)]
    started = threading.Barrier(len(quads) + 1)
    for listen, upstream, up, down in quads:
        args = (listen, upstream, int(up), int(down), started)
        threading.Thread(target=_serve, args=args, daemon=True).start()
    started.wait()
    print("listening", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main(sys.argv[1:])
