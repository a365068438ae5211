"""Plan parsing: the format, and every validation error naming its key."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from iolab.plans import PlanError, load_plan, parse_plan

MINIMAL = {"plan": {"name": "p"}, "base": {"filename": "f.dat", "size": "1m"}}


def _with(**tables: object) -> dict[str, object]:
    data: dict[str, object] = {k: dict(v) for k, v in MINIMAL.items()}
    data.update(tables)
    return data


def test_full_plan_parses(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(
        textwrap.dedent(
            """
            [plan]
            name = "qd"
            description = "queue depth"
            mode = "zip"
            repeats = 3
            drop_caches = true
            timeout_per_point = "2m"
            [base]
            filename = "f.dat"
            bs = "4k"
            time_based = true
            [[axis]]
            name = "iodepth"
            values = [1, 16]
            [[axis]]
            name = "rw"
            values = ["read", "randread"]
            [warmup]
            ramp_time = "5s"
            [precondition]
            rw = "write"
            bs = "1m"
            size_factor = 2
            [steady_state]
            metric = "bw_bytes_per_s"
            max_rounds = 10
            [quick]
            runtime = "2s"
            repeats = 1
            """
        )
    )
    plan = load_plan(path)
    assert plan.mode == "zip" and plan.repeats == 3 and plan.drop_caches
    assert plan.timeout_per_point_ns == 120 * 10**9
    assert [a.name for a in plan.axes] == ["iodepth", "rw"]
    assert plan.base == (("filename", "f.dat"), ("bs", "4k"), ("time_based", True))
    assert plan.warmup_ramp_time == "5s"
    assert plan.precondition == (("rw", "write"), ("bs", "1m"), ("size_factor", 2))
    assert plan.steady_state is not None and plan.steady_state.metric == "bw_bytes_per_s"
    assert plan.steady_state.rounds == 5 and plan.steady_state.max_rounds == 10
    assert dict(plan.quick) == {"runtime": "2s", "repeats": 1}


def test_hash_changes_with_the_plan() -> None:
    a = parse_plan(_with(axes={"bs": ["4k"]}))
    b = parse_plan(_with(axes={"bs": ["8k"]}))
    assert a.plan_hash() == parse_plan(_with(axes={"bs": ["4k"]})).plan_hash()
    assert a.plan_hash() != b.plan_hash()
    described = parse_plan(_with(plan={"name": "p", "description": "new words"}, axes={"bs": ["4k"]}))
    assert described.plan_hash() == a.plan_hash(), "the description does not change what runs"


def test_bad_toml_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("[plan\nname=")
    with pytest.raises(PlanError, match=r"bad.toml: not valid TOML"):
        load_plan(path)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"base": {"size": "1m"}}, r"plan: missing: the plan needs a \[plan\] table"),
        ({"plan": {"name": "p"}}, r"base: missing"),
        (_with(extra={}), r"extra: unknown key"),
        (_with(plan={"name": "p", "modes": "zip"}), r"plan.modes: unknown key"),
        (_with(plan={"name": ""}), r"plan.name: required"),
        (_with(plan={"name": "a/b"}), r"plan.name: required: a non-empty name without '/'"),
        (_with(plan={"name": "p", "mode": "grid"}), r"plan.mode: 'grid' is not matrix or zip"),
        (_with(plan={"name": "p", "repeats": 0}), r"plan.repeats: expected a whole number ≥ 1, got 0"),
        (_with(plan={"name": "p", "repeats": True}), r"plan.repeats: expected a whole number"),
        (_with(plan={"name": "p", "drop_caches": "yes"}), r"plan.drop_caches: expected bool"),
        (_with(plan={"name": "p", "description": 3}), r"plan.description: expected str"),
        (_with(plan={"name": "p", "timeout_per_point": "soon"}), r"plan.timeout_per_point: interval 'soon'"),
        (_with(plan="x"), r"plan: expected a table"),
        (_with(base={"bs": ["4k"]}), r"base.bs: expected a string, number or boolean, got list"),
        (_with(axes={"bs": []}), r"axes.bs: expected a non-empty list of values"),
        (_with(axes={"bs": "4k"}), r"axes.bs: expected a non-empty list"),
        (_with(axes={"bs": [{"a": 1}]}), r"axes.bs: expected a string, number or boolean, got dict"),
        (_with(axes={"bs": ["4k"]}, axis=[{"name": "rw", "values": ["read"]}]), r"axis: give the axes either"),
        (_with(axis=[{"name": "rw"}]), r"axis\[1\]: expected name"),
        (_with(axis={"name": "rw"}), r"axis: expected \[\[axis\]\] tables"),
        (
            _with(axis=[{"name": "rw", "values": ["read"]}, {"name": "rw", "values": ["write"]}]),
            r"axes: an option appears on two axes",
        ),
        (
            _with(plan={"name": "p", "mode": "zip"}, axes={"bs": ["4k", "8k"], "iodepth": [1]}),
            r"plan.mode: zip needs axes of equal length \(bs: 2, iodepth: 1\)",
        ),
        (_with(warmup={"ramp": "5s"}), r"warmup.ramp: unknown key"),
        (_with(warmup={"ramp_time": "x"}), r"warmup.ramp_time: interval 'x'"),
        (_with(precondition={"rw": "write", "size_factor": 0}), r"precondition.size_factor: expected a whole number"),
        (_with(precondition={"rw": "write", "runtime": "5s"}), r"precondition.runtime: not allowed"),
        (_with(steady_state={"metric": "p99"}), r"steady_state.metric: 'p99' is not one of iops"),
        (_with(steady_state={"window": 5}), r"steady_state.window: unknown key"),
        (_with(steady_state={"rounds": 5, "max_rounds": 4}), r"steady_state.max_rounds: 4 is fewer than rounds \(5\)"),
        (_with(steady_state={"excursion_pct": 0}), r"steady_state.excursion_pct: expected a percentage > 0"),
        (_with(quick={"runtime": ["2s"]}), r"quick.runtime: expected a string"),
    ],
)
def test_validation_errors_name_the_key(data: dict[str, object], message: str) -> None:
    with pytest.raises(PlanError, match=message):
        parse_plan(data, "plan.toml")
    with pytest.raises(PlanError, match=r"^plan.toml: "):
        parse_plan(data, "plan.toml")
