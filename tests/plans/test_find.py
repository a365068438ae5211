"""``iolab find``: the SLO grammar, the verdict's confidence, and the search
on models whose latency-load curve is known by construction.

The models (no engine, milliseconds per search):

- **paced M/M/1** (axis ``rate_iops``): a device serving ``MU`` I/Os per
  second one at a time, exponential service, offered Poisson arrivals at
  ``rate_iops``. Its latency (sojourn time) is exponential with rate
  ``MU - rate``, so ``p99 = ln(100) / (MU - rate)`` and the highest rate
  meeting ``p99 < T`` is exactly ``MU - ln(100) / T``.
- **saturated device** (axis ``iodepth``): a device of fixed capacity ``C``
  IOPS kept busy, so by Little's law every I/O waits ``QD / C``: the
  latency is that, the highest QD meeting ``p99 < T`` is ``floor(T C)``
  (less one where ``T C`` is whole).

Each repeat draws ``N`` latencies from the model (seeded), builds their
histogram with the core (``_native.hist_from_counts``) and hands it to the
same SLO code the CLI uses: percentiles from the merged histogram of the
repeats.
"""

from __future__ import annotations

import math
import random
import statistics
from typing import Callable

import pytest
from iolab import _native
from iolab.plans.find import AxisSpace, FindError, axis_space, search, statement
from iolab.plans.find_model import predict
from iolab.plans.slo import DirRepeat, Repeat, SloError, judge, parse_slo

MU = 100_000.0  # the M/M/1 device's service rate, I/Os per second
RUNTIME_NS = 1_000_000_000


def _repeat(lat_ns: list[float], ios: int, direction: str = "read") -> Repeat:
    counts: dict[int, int] = {}
    for v in lat_ns:
        counts[max(1, int(v))] = counts.get(max(1, int(v)), 0) + 1
    h = _native.hist_from_counts(sorted(counts.items()))
    return {direction: DirRepeat(ios, RUNTIME_NS, {"lat": h, "clat": h})}


class Model:
    """``measure(value, repeat)`` of a model; counts the runs."""

    def __init__(self, latency_s: Callable[[int, random.Random], float], n: int = 4000, seed: int = 1) -> None:
        self.latency_s, self.n, self.seed, self.runs = latency_s, n, seed, 0

    def __call__(self, value: int, repeat: int) -> Repeat:
        self.runs += 1
        rng = random.Random(hash((self.seed, value, repeat)))
        lats = [self.latency_s(value, rng) * 1e9 for _ in range(self.n)]
        return _repeat(lats, int(value))


def mm1(rate: int, rng: random.Random) -> float:
    return rng.expovariate(MU - rate) if rate < MU else 1.0  # past capacity: the queue grows without bound


def test_mm1_rate_search_finds_the_true_maximum_within_5pct_in_a_third_of_a_sweeps_runs() -> None:
    slo = parse_slo("p99<1ms")
    true_max = MU - math.log(100) / 1e-3  # 95 394.8 I/Os per second
    space = axis_space("rate_iops", start="1000", limit="200000", resolution="2%")
    model = Model(mm1)
    out = search(model, slo, space, repeats=2, max_repeats=6)
    assert out.best is not None and out.first_fail is not None
    assert abs(out.best.value - true_max) / true_max <= 0.05, statement(out)
    assert out.best.value < out.first_fail.value <= out.best.value + space.step(out.best.value)
    assert model.runs == out.runs
    assert out.runs * 3 <= out.full_sweep_runs, statement(out)


def saturated(capacity_iops: float) -> Callable[[int, random.Random], float]:
    def lat(qd: int, rng: random.Random) -> float:
        return qd / capacity_iops * rng.uniform(0.98, 1.0)

    return lat


def test_iodepth_search_on_a_saturated_device() -> None:
    # T C = 1 ms x 150 000 IOPS = 150: QD 150 is the highest meeting p99 < 1 ms.
    slo = parse_slo("p99<1ms")
    space = axis_space("iodepth", resolution="1")
    model = Model(saturated(150_000.0), n=500)
    out = search(model, slo, space, repeats=2, max_repeats=4)
    assert out.best is not None and out.first_fail is not None
    assert out.best.value == 150 and out.first_fail.value == 151, statement(out)
    assert out.runs * 3 <= out.full_sweep_runs, statement(out)


def test_nothing_meets_the_slo_and_the_limit_still_meets_it() -> None:
    slo = parse_slo("p99<1us")
    out = search(Model(saturated(1000.0), n=100), slo, axis_space("iodepth", limit="8"), repeats=1, max_repeats=1)
    assert out.best is None and out.first_fail is not None and out.first_fail.value == 1
    assert "no point meets" in statement(out)[0]
    easy = search(Model(saturated(1e9), n=100), parse_slo("p99<1s"), axis_space("iodepth", limit="8"), repeats=1,
                  max_repeats=1)  # fmt: skip
    assert easy.first_fail is None and easy.best is not None and easy.best.value == 8
    assert [e.value for e in easy.evaluations] == [1, 2, 4, 8]
    assert "still holds at --limit 8" in statement(easy)[1]


def _known_spread(center_ns: float, spread_ns: float, k: int) -> list[Repeat]:
    """``k`` repeats whose every latency equals the repeat's value: the
    repeats' p99s are exactly center + spread x (-1 .. +1), evenly."""
    values = [center_ns + spread_ns * (2 * i / (k - 1) - 1) for i in range(k)]
    return [_repeat([v] * 100, 100) for v in values]


def test_the_confidence_interval_is_computed_from_the_repeats() -> None:
    reps = _known_spread(900_000.0, 40_000.0, 5)
    per = [float(_native.hist_stats(r["read"].hists["lat"], [99.0])["percentiles"][99.0]) for r in reps]
    v = judge(parse_slo("p99<1ms"), reps).clauses[0]
    # Student's t over the repeats' own p99s: t(4) = 2.7764 (the table's value).
    # The figure is the merged histogram's p99: here the top repeat's value
    # (every latency of a repeat is equal), within the histogram's precision, not a mean.
    assert v.value == pytest.approx(max(per), rel=0.002)
    # Its interval: ± Student's t over the repeats' own p99s, t(4) = 2.7764 (the table's value).
    half = 2.7764451 * statistics.stdev(per) / math.sqrt(5)
    assert v.ci95 == pytest.approx((v.value - half, v.value + half), rel=1e-6)
    assert v.ci95 is not None and v.ci95[1] < 1_000_000
    assert v.holds and v.confident
    # The same spread closer to the threshold: met, but the threshold inside the interval.
    close = judge(parse_slo("p99<1ms"), _known_spread(930_000.0, 40_000.0, 5))
    assert close.holds and not close.confident
    over = judge(parse_slo("p99<1ms"), _known_spread(1_100_000.0, 40_000.0, 5))
    assert not over.holds and over.confident
    one = judge(parse_slo("p99<1ms"), reps[:1])
    assert one.clauses[0].ci95 is None and not one.confident


def test_the_interval_covers_the_true_value_95_times_in_100() -> None:
    # Latencies exponential with mean 200 µs: the true p99 is 200 µs x ln 100 =
    # 921 µs. Four repeats of 500 I/Os per point, 200 points (seeded: the same
    # every run): the interval holds the true p99 about 95 times in 100.
    rng = random.Random(7)
    slo = parse_slo("p99<1ms")
    truth = 200_000.0 * math.log(100)
    covered = 0
    for _ in range(200):
        reps = [_repeat([rng.expovariate(1 / 200_000.0) for _ in range(500)], 500) for _ in range(4)]
        low, high = judge(slo, reps).clauses[0].ci95 or (0.0, 0.0)
        covered += low <= truth <= high
    assert 0.90 <= covered / 200 <= 0.99, covered


class PerRepeat(Model):
    """Latency QD / 100k IOPS, each repeat off by a fixed -10 .. +10 %."""

    def __call__(self, value: int, repeat: int) -> Repeat:
        self.runs += 1
        factor = (0.9, 1.1, 1.0, 0.95, 1.05)[(repeat - 1) % 5]
        return _repeat([value / 100_000.0 * factor * 1e9] * 200, value)


def test_close_decisions_get_more_repeats_and_the_statement_says_so() -> None:
    # Far from QD 100 (T = 1 ms) two repeats decide, near it the threshold lies inside the interval.
    model = PerRepeat(mm1)
    out = search(model, parse_slo("p99<1ms"), axis_space("iodepth", resolution="1"), repeats=2, max_repeats=5)
    reps = {e.value: len(e.repeats) for e in out.evaluations}
    assert reps[1] == 2 and reps[2] == 2  # far below: decided at once
    assert max(reps.values()) == 5  # near the threshold: up to max_repeats
    assert model.runs == out.runs == sum(reps.values())
    lines = statement(out)
    assert lines[0].startswith("p99 ") and "± " in lines[0] and "QD " in lines[0]
    assert "breaks it" in lines[1]


@pytest.mark.parametrize(
    ("text", "clauses"),
    [
        ("p99<1ms", [("lat", None, 99.0, 1e6)]),
        ("write.clat.p99.9<=5ms and p50<200us", [("clat", "write", 99.9, 5e6), ("lat", None, 50.0, 2e5)]),
        ("p9999<20ms", [("lat", None, 99.99, 2e7)]),
        ("read.iops>10k", [("iops", "read", None, 1e4)]),
    ],
)
def test_slo_grammar(text: str, clauses: list[tuple[object, ...]]) -> None:
    slo = parse_slo(text)
    assert [(c.metric, c.direction, c.percentile, c.threshold) for c in slo.clauses] == clauses


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("p99 under 1ms", "does not parse"),
        ("p97<1ms", "not a percentile iolab records"),
        ("p99.95<1ms", "not a percentile iolab records"),
        ("p99<fast", "not a duration"),
        ("p99>1ms", "ceiling"),
        ("iops<5", "floor"),
        ("p99<1ms and", "empty"),
        ("", "empty"),
    ],
)
def test_bad_slo_is_refused_in_one_line(text: str, says: str) -> None:
    with pytest.raises(SloError) as e:
        parse_slo(text)
    assert says in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"name": "rw"}, "not a numeric job option"),
        ({"name": "iodepth", "resolution": "fine"}, "--resolution"),
        ({"name": "iodepth", "start": "64", "limit": "8"}, "start < limit"),
        ({"name": "bs", "start": "1000"}, "multiples of 4096"),
        ({"name": "iodepth", "growth": 1.0}, "--growth"),
    ],
)
def test_bad_axis_is_refused_in_one_line(kwargs: dict[str, object], says: str) -> None:
    name = str(kwargs.pop("name"))
    with pytest.raises(FindError) as e:
        axis_space(name, **kwargs)  # type: ignore[arg-type]
    assert says in str(e.value) and "\n" not in str(e.value)


def test_full_sweep_counts_the_grid_at_the_resolution() -> None:
    space = AxisSpace("iodepth", 1, 4096, resolution=None, resolution_pct=50.0)
    assert space.full_sweep_values(10) == [1, 2, 3, 5, 8, 10]


def closed_loop(per_io_s: float) -> Callable[[int, random.Random], float]:
    """One request served at a time, ``per_io_s`` each: QD n waits n of them
    (bench/find_nbd.py's stack), each run a little off (±1 %)."""

    def lat(qd: int, rng: random.Random) -> float:
        return qd * per_io_s * rng.uniform(0.99, 1.01)

    return lat


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_fitted_curve_finds_the_nbd_stacks_qd_in_a_quarter_of_a_sweep(seed: int) -> None:
    # n x 1.025 ms against p50 < 40.5 ms: QD 39 (39.98 ms) meets it, QD 40 (41.0 ms) breaks it.
    # Doubling brackets it at [32, 64]; the line through 16 and 32 already says 39.5, so the
    # search measures 39 and then 40 and stops: 8 values, their two repeats each, where the
    # sweep of QD 1 to 40 needs 80 runs.
    model = Model(closed_loop(1.025e-3), n=300, seed=seed)
    out = search(model, parse_slo("p50<40.5ms"), axis_space("iodepth", limit="128", resolution="1"), repeats=2,
                 max_repeats=4)  # fmt: skip
    assert out.best is not None and out.first_fail is not None
    assert (out.best.value, out.first_fail.value) == (39, 40), statement(out)
    assert [e.value for e in out.evaluations] == [1, 2, 4, 8, 16, 32, 39, 40]
    assert out.runs * 4 <= out.full_sweep_runs == 80, statement(out)


def test_repeats_go_to_the_bracket_ends_only() -> None:
    # Two repeats of a value are never confident near the threshold, and only the answer's
    # two values get the extra repeats.
    out = search(PerRepeat(mm1), parse_slo("p99<1ms"), axis_space("iodepth", resolution="1"), repeats=2,
                 max_repeats=5)  # fmt: skip
    assert out.best is not None and out.first_fail is not None
    extra = {e.value: len(e.repeats) for e in out.evaluations if len(e.repeats) > 2}
    assert set(extra) <= {out.best.value, out.first_fail.value}, extra
    # The merged p99 is the worst repeat's (1.1 x QD / 100 000 s): QD 90 meets 1 ms, QD 91 breaks it.
    assert (out.best.value, out.first_fail.value) == (90, 91), statement(out)


def test_a_guess_above_the_answer_goes_down_to_bracket_it() -> None:
    model = Model(saturated(150_000.0), n=200)
    out = search(model, parse_slo("p99<1ms"), axis_space("iodepth", resolution="1"), repeats=1, max_repeats=1,
                 guess=1000)  # fmt: skip
    assert out.best is not None and out.first_fail is not None
    assert (out.best.value, out.first_fail.value) == (150, 151), statement(out)
    assert [e.value for e in out.evaluations][:3] == [1000, 500, 250]  # down x 1/2 while it breaks
    assert out.evaluations[3].value <= 150


@pytest.mark.parametrize(
    ("points", "crossing"),
    [
        # s = x / 40: linear, crosses 1 at 40 (the third point tells it from the inverse shape).
        ([(10, 0.25), (20, 0.5), (30, 0.75)], 40.0),
        # s = 10 / (100 - x) (an M/M/1 p99 over its ceiling): inverse, crosses 1 at 90.
        ([(20, 10 / 80), (40, 10 / 60), (60, 10 / 40)], 90.0),
    ],
)
def test_the_curve_model_tells_linear_from_inverse(points: list[tuple[int, float]], crossing: float) -> None:
    assert predict((points[1], points[2]), points[:1], within=0.01) == pytest.approx(crossing)
    assert predict((points[0], points[2]), points[1:2]) == pytest.approx(crossing)
    assert predict((points[1], points[2]), [(5, 1.0)], within=0.15) is None  # a third point neither shape predicts
    assert predict(((1, 0.5), (2, 0.5)), []) is None  # flat: no crossing


class RunToRunNoise(Model):
    """bench/find_nbd.py's curve (QD n at n x 1.025 ms) where each run as a
    whole is off by up to -1 .. +3 % (a loaded machine's target: late timers
    only slow it), seeded per search."""

    def __call__(self, value: int, repeat: int) -> Repeat:
        self.runs += 1
        rng = random.Random(hash((self.seed, value, repeat)))
        run = 1 + rng.uniform(-0.01, 0.03)
        return _repeat([value * 1.025e-3 * run * rng.uniform(0.99, 1.01) * 1e9 for _ in range(self.n)], value)


def test_run_to_run_noise_costs_repeats_but_stays_under_a_third_of_a_sweep() -> None:
    # 20 searches: each answer within 5 % of QD 39 (the curve without the noise), and each
    # within a third of the full sweep's runs, confirmations of the two answer values included.
    shares, answers = [], []
    for seed in range(20):
        out = search(RunToRunNoise(lambda v, r: 0.0, n=200, seed=seed), parse_slo("p50<40.5ms"),
                     axis_space("iodepth", limit="128", resolution="1"), repeats=2, max_repeats=4)  # fmt: skip
        assert out.best is not None
        shares.append(out.runs / out.full_sweep_runs)
        answers.append(out.best.value)
    assert all(abs(a - 39) / 39 <= 0.05 for a in answers), answers
    assert max(shares) <= 1 / 3, shares
