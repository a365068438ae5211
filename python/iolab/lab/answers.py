"""The workbook's questions answered, and the measured figures checked
against the model.

Answers come from figures the host's load cannot change. On the
simulated array that is the model: the same stack on a virtual clock
(:func:`iolab.lab.raid.model_figures`), the same figures every run. The
client's measurement is not used for them: a loaded machine lowers it by
more than the differences the questions ask about (one run said a 1 MiB ->
2 MiB sequential read was bound by positioning, issue 21). On real storage
there is no model and the answers use the client's measurement, and say so.
Every answer names the figure it used (``source``) and states the numbers
behind it (percent changes or ratios); when the figures do not show what
the workbook expects, the answer says what they do show.

:func:`gaps` compares each simulated test's client measurement with the
model. A gap beyond :data:`GAP_TOLERANCE` is explained from the target's
own record of the requests (its service time and its reply timer's
lateness): whether the stack served them as the model says (the loss is
the client's or the host's) or not.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from iolab.lab.workbook import BS_BYTES, MODEL_RTT_NS, QUESTION_TESTS, ROWS, Test, all_tests
from iolab.units import fmt_ns

Measured = dict[str, dict[str, Any]]
Figures = dict[str, float]

#: What each source is, as an answer cites it.
SOURCES = {
    "model": "model: the simulated stack on a virtual clock, which the host's load cannot change",
    "client": "client measurement: real storage has no model; a loaded host lowers these figures",
}
#: Measured / model beyond 1 +- this is a gap worth a line. A chosen bound
#: (the client's own few tens of µs per request are inside it for every
#: test here), not a measured noise band: a gap inside it is left unremarked.
GAP_TOLERANCE = 0.15
#: A reply timer later than this share of the service time on average is the host's doing.
LATE_SHARE = 0.10
#: A row's measured figure is marked unreliable when the target's replies
#: went out later than this share of the model's time per request, on
#: average (at QD 1 the client loses that share of its rate to the host)
#: or at p50: the host could not hold the model's real time.
LATE_ROW_SHARE = 0.05
MIB = 1 << 20
ISSUE_CLIENT_SIDE = 25


def _pct(a: float, b: float) -> float:
    return (b / a - 1.0) * 100.0 if a else float("nan")


def _row_test(lab: str, label: str, column: Optional[str] = None) -> Test:
    for r in ROWS:
        if r.lab == lab and r.label == label and (column is None or r.column == column):
            return r.test
    raise KeyError(f"{lab} {label} {column}")


def figures_for(m: Measured, tests: list[Test]) -> tuple[Optional[str], list[Figures]]:
    """The figures the answer about ``tests`` uses, and their source: the
    model's where every test has one, else the client's measurement."""
    got = [m.get(t.key) for t in tests]
    if any(g is None for g in got):
        return None, []
    present = [g for g in got if g is not None]
    if all(g.get("model") for g in present):
        return "model", [g["model"] for g in present]
    return "client", [{"iops": float(g["iops"]), "mib_per_s": float(g["mib_per_s"])} for g in present]


def _size_step(f: list[Figures], what: str) -> str:
    a, b = f
    di, db = _pct(a["iops"], b["iops"]), _pct(a["mib_per_s"], b["mib_per_s"])
    head = f"{what}: IOPS {di:+.0f}%, MB/s {db:+.0f}%"
    if abs(di) < abs(db):
        return f"{head}: MB/s changes more; the per-I/O cost is positioning, not transfer"
    return f"{head}: IOPS changes more; throughput is bound by the drives' sustained media rate, not per-I/O cost"


def _read_ahead(f: list[Figures]) -> str:
    ra, none = f
    x = ra["mib_per_s"] / none["mib_per_s"]
    why = (
        "the controller sees the sequential stream and reads ahead from all drives at once, "
        "while without read-ahead each 64 KiB request waits on one drive"
        if x > 1.2
        else "read-ahead did not help here"
    )
    return (
        f"Adaptive Read Ahead {ra['mib_per_s']:.1f} MiB/s vs No Read Ahead {none['mib_per_s']:.1f} MiB/s "
        f"({x:.1f}x): {why}"
    )


def _write_back(f: list[Figures]) -> str:
    wb, wt = f
    x = wb["mib_per_s"] / wt["mib_per_s"]
    return (
        f"Write Back {wb['mib_per_s']:.1f} MiB/s vs Write Through {wt['mib_per_s']:.1f} MiB/s ({x:.0f}x, "
        "disk cache disabled): write-back acknowledges once the data is in the controller cache and destages "
        "whole stripes (no parity reads); write-through waits, per 64 KiB, for RAID 5's read-modify-write "
        "on two drives, whose write must wait a revolution for the sectors it just read"
    )


def _disk_cache(f: list[Figures]) -> str:
    off, on = f
    d = _pct(off["mib_per_s"], on["mib_per_s"])
    why = (
        "the controller already queues whole-stripe writes to every drive, so a second cache in the "
        "drive has little left to hide"
        if abs(d) <= 15
        else "here the drive's cache changed the figure by more than 15%, so it was not redundant"
    )
    return (
        f"Write Back with disk cache enabled {on['mib_per_s']:.1f} MiB/s vs disabled "
        f"{off['mib_per_s']:.1f} MiB/s ({d:+.0f}%): {why}"
    )


def _seq_vs_random(f: list[Figures]) -> str:
    seq, rnd = f
    x = seq["mib_per_s"] / rnd["mib_per_s"]
    why = (
        "each random I/O pays a seek and half a revolution, so random is counted in IOPS"
        if x >= 4
        else "random costs little more than sequential here: no mechanical positioning behind it"
    )
    return (
        f"64 KiB sequential {seq['mib_per_s']:.1f} MiB/s vs random {rnd['mib_per_s']:.1f} MiB/s "
        f"({x:.1f}x); random read is {rnd['iops']:.0f} IOPS: {why}"
    )


#: (lab, question, the tests it compares, how the answer reads their figures).
QUESTIONS: tuple[tuple[str, str, list[Test], Callable[[list[Figures]], str]], ...] = (
    (
        "1",
        "If we change 8 KB random read to 16 KB random read, which changes more - IOPS or MB/s?",
        [QUESTION_TESTS["rand8k"], QUESTION_TESTS["rand16k"]],
        lambda f: _size_step(f, "8 KiB -> 16 KiB random read"),
    ),
    (
        "1",
        "If we change 1 MB sequential read to 2 MB sequential read, which changes more - IOPS or MB/s?",
        [QUESTION_TESTS["seq1m"], QUESTION_TESTS["seq2m"]],
        lambda f: _size_step(f, "1 MiB -> 2 MiB sequential read"),
    ),
    (
        "2",
        "Which Read Policy gives better sequential read performance, and why?",
        [_row_test("2A", "Adaptive Read Ahead"), _row_test("2A", "No Read Ahead")],
        _read_ahead,
    ),
    (
        "2",
        "Why does Write Back give larger benefits than Write Through for sequential writes?",
        [_row_test("2B", "Write Back", "Disk Cache Disabled"), _row_test("2B", "Write Through", "Disk Cache Disabled")],
        _write_back,
    ),
    (
        "2",
        "Why is the disk write cache unnecessary with Write Back?",
        [_row_test("2B", "Write Back", "Disk Cache Disabled"), _row_test("2B", "Write Back", "Disk Cache Enabled")],
        _disk_cache,
    ),
    (
        "1",
        "Sequential vs random (lab 1B): which metric describes each?",
        [_row_test("1B", "64 KB Sequential Read"), _row_test("1B", "64 KB Random Read")],
        _seq_vs_random,
    ),
)


def answers(m: Measured) -> list[dict[str, str]]:
    """``[{"lab", "question", "answer", "source"}]`` for the questions the
    data cover; ``answer`` opens with the figure it used ("model: ...")."""
    out = []
    for lab, question, tests, reading in QUESTIONS:
        source, f = figures_for(m, tests)
        if source is not None:
            out.append({"lab": lab, "question": question, "answer": f"{source}: {reading(f)}", "source": source})
    return out


def _model_request_ns(t: Test, got: dict[str, Any]) -> float:
    """The model's time per request, its assumed client round trip included."""
    return t.iodepth * BS_BYTES[t.bs] / (float(got["model"]["mib_per_s"]) * MIB) * 1e9


def _lateness(server: dict[str, Any]) -> str:
    """The reply timer's lateness as the record has it: p50 and p99 where
    recorded (runs before the fidelity record have the mean only), and the mean."""
    late = float(server["hold_late_ns_mean"])
    if "late_ns_p50" not in server:
        return f"replies {fmt_ns(late)} late on average"
    p50, p99 = float(server["late_ns_p50"]), float(server["late_ns_p99"])
    return f"replies {fmt_ns(p50)} late at p50, {fmt_ns(p99)} at p99 ({fmt_ns(late)} on average)"


def fidelity(t: Test, got: dict[str, Any]) -> Optional[dict[str, Any]]:
    """How well the host held the model's real time for a simulated test,
    from the target's record of how late its replies went out: ``{"late_ns_p50",
    "late_ns_p99" (None in runs recorded before them), "late_ns_mean",
    "model_ns_per_request", "late_share", "unreliable", "text"}``; ``None``
    without a model or a record. ``unreliable`` when the replies were later
    than :data:`LATE_ROW_SHARE` of the model's time per request on average
    or at p50: then the measured column is the host's, and the model's stands."""
    server, model = got.get("server"), got.get("model")
    if not server or not server.get("ios") or not model or not model.get("mib_per_s"):
        return None
    per_request = _model_request_ns(t, got)
    mean = float(server["hold_late_ns_mean"])
    p50 = server.get("late_ns_p50")
    p99 = server.get("late_ns_p99")
    worst = max(mean, float(p50) if p50 is not None else 0.0)
    share = worst / per_request
    unreliable = share > LATE_ROW_SHARE
    text = f"{_lateness(server)}, against the model's {fmt_ns(per_request)} per request"
    if unreliable:
        text = f"machine too busy: {text} — measured column unreliable; model column stands"
    return {
        "late_ns_p50": None if p50 is None else float(p50),
        "late_ns_p99": None if p99 is None else float(p99),
        "late_ns_mean": mean,
        "model_ns_per_request": per_request,
        "late_share": share,
        "unreliable": unreliable,
        "text": text,
    }


def _explain(t: Test, got: dict[str, Any]) -> tuple[str, str]:
    """(verdict, why) for a gap between the client's figure and the model's,
    from the target's own record of the test's requests."""
    server = got.get("server")
    if not server or not server.get("ios"):
        return "unexplained", "the target recorded no requests for it"
    model_ns = _model_request_ns(t, got) - MODEL_RTT_NS
    hold, late = float(server["lat_ns_mean"]), float(server["hold_late_ns_mean"])
    service = hold - late
    # Little's law: the requests the target held at once, on average, are
    # the client's rate times the target's mean hold.
    held = float(got["iops"]) * hold / 1e9
    record = (
        f"the target's record: service {service / 1e3:.0f} µs per request (model {model_ns / 1e3:.0f} µs), "
        f"reply timer: {_lateness(server)}"
    )
    if t.iodepth > 1 and held < (1.0 - GAP_TOLERANCE) * t.iodepth:
        return "client", (
            f"{record}, {held:.1f} requests held at once of the {t.iodepth} asked for (Little's law): the client "
            f"did not keep its queue full, so the stack ran a lighter load than the model's; the loss is on the "
            f"client/host side (see issue {ISSUE_CLIENT_SIDE})"
        )
    late_host = late > LATE_SHARE * max(service, 1.0)
    host = f"{record}: the host woke the target's reply timer late; the loss is the host's"
    if t.iodepth > 1 and late_host:
        # Requests waiting on a late timer are out of the stack: the ones
        # left meet a lighter load, so the service time is not the model's either.
        return "host", host
    if model_ns <= 0 or abs(service / model_ns - 1.0) > GAP_TOLERANCE:
        side = "longer" if service > model_ns else "shorter"
        return "target", (
            f"{record}: the target held requests {side} than the model, its reply timer's lateness aside — "
            "time inside the target process (the stack, or the host delaying the target's thread); "
            "not explained, doubt this figure"
        )
    if late_host:
        return "host", host
    return (
        "client",
        f"{record}: replies were on time; the loss is on the client/host side (see issue {ISSUE_CLIENT_SIDE})",
    )


def gaps(m: Measured) -> list[dict[str, Any]]:
    """Every simulated test whose client figure is off the model's by more
    than :data:`GAP_TOLERANCE`: ``{"test", "measured_mib_per_s",
    "model_mib_per_s", "ratio", "verdict", "text"}`` with ``verdict`` one of
    "client" (the target served on time, or the client kept fewer requests
    outstanding than asked), "host" (the target's reply timer woke late),
    "target" (the target held requests longer or shorter than the model with
    its timer on time: not explained) or "unexplained" (no record)."""
    out = []
    tests = {t.key: t for t in all_tests()}
    for key, got in m.items():
        model = got.get("model")
        if not model or not model.get("mib_per_s"):
            continue
        ratio = float(got["mib_per_s"]) / float(model["mib_per_s"])
        if abs(ratio - 1.0) <= GAP_TOLERANCE:
            continue
        t = tests[key]
        verdict, why = _explain(t, got)
        text = (
            f"{t.rw} {t.bs} QD {t.iodepth} ({t.array.key}): client measured {got['mib_per_s']:.1f} vs model "
            f"{model['mib_per_s']:.1f} MiB/s: {ratio:.2f} — {why}"
        )
        out.append(
            {
                "test": key,
                "measured_mib_per_s": float(got["mib_per_s"]),
                "model_mib_per_s": float(model["mib_per_s"]),
                "ratio": ratio,
                "verdict": verdict,
                "text": text,
            }
        )
    return out
