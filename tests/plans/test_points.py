"""Points: matrix and zip expansion, --quick, --target, validation by the core."""

from __future__ import annotations

import pytest
from iolab.errors import JobError
from iolab.plans import PlanError, expand, parse_plan, point_job, resolve, validate
from iolab.plans.points import precondition_job, warmup_job

BASE = {"filename": "f.dat", "size": "1m", "ioengine": "null", "time_based": True, "runtime": "1s"}


def _plan(mode: str = "matrix", **tables: object):
    data: dict[str, object] = {"plan": {"name": "p", "mode": mode}, "base": dict(BASE)}
    data.update(tables)
    return parse_plan(data)


def test_matrix_is_the_full_product_last_axis_fastest() -> None:
    plan = _plan(axes={"bs": ["4k", "64k"], "iodepth": [1, 16, 32]})
    points = expand(plan)
    assert len(points) == 6
    assert [p.label for p in points[:4]] == [
        "bs=4k, iodepth=1",
        "bs=4k, iodepth=16",
        "bs=4k, iodepth=32",
        "bs=64k, iodepth=1",
    ]
    assert [p.index for p in points] == [1, 2, 3, 4, 5, 6]
    assert points[5].key == "p006"


def test_zip_pairs_values() -> None:
    plan = _plan("zip", axes={"bs": ["4k", "1m"], "rw": ["randread", "read"]})
    assert [p.label for p in expand(plan)] == ["bs=4k, rw=randread", "bs=1m, rw=read"]


def test_no_axes_is_one_point() -> None:
    assert [p.label for p in expand(_plan())] == ["base"]


def test_point_job_order_base_axis_warmup() -> None:
    plan = _plan(axes={"runtime": ["2s"]}, warmup={"ramp_time": "1s"})
    job = point_job(plan, expand(plan)[0])
    opts = dict(job.options)
    assert opts["runtime"] == "2s" and opts["ramp_time"] == "1s" and opts["time_based"] is None


def test_quick_and_target_are_folded_in() -> None:
    plan = _plan(axes={"bs": ["4k"]}, quick={"runtime": "100ms", "size": "64k", "repeats": 2})
    resolved = resolve(plan, quick=True, target="/tmp/other.dat")
    assert dict(resolved.base)["runtime"] == "100ms"
    assert dict(resolved.base)["filename"] == "/tmp/other.dat"
    assert resolved.repeats == 2
    assert resolved.plan_hash() != resolve(plan).plan_hash()


def test_quick_errors() -> None:
    with pytest.raises(PlanError, match=r"--quick: the plan has no \[quick\] table"):
        resolve(_plan(), quick=True)
    with pytest.raises(PlanError, match=r"quick.bs: is also an axis"):
        resolve(_plan(axes={"bs": ["4k"]}, quick={"bs": "8k"}), quick=True)
    with pytest.raises(PlanError, match=r"quick.repeats: expected a whole number"):
        resolve(_plan(quick={"repeats": 0}), quick=True)
    with pytest.raises(PlanError, match=r"quick.max_rounds: the plan has no \[steady_state\]"):
        resolve(_plan(quick={"max_rounds": 3}), quick=True)


def test_quick_max_rounds_shrinks_the_window() -> None:
    plan = resolve(_plan(steady_state={"max_rounds": 20}, quick={"max_rounds": 3}), quick=True)
    assert plan.steady_state is not None
    assert (plan.steady_state.rounds, plan.steady_state.max_rounds) == (3, 3)


def test_every_point_is_validated_before_running() -> None:
    plan = _plan(axes={"bs": ["4k", "512k"], "iodepth": [1, 64, "many"]})
    with pytest.raises(JobError, match=r"^point 3 \(bs=4k, iodepth=many\): .*iodepth") as e:
        validate(plan, expand(plan))
    assert "point 3" in str(e.value)


def test_prepared_jobs_come_back_per_point() -> None:
    plan = _plan(axes={"iodepth": [1, 8]})
    prepared = validate(plan, expand(plan))
    assert [p["iodepth"] for p in prepared] == [1, 8]


def test_precondition_and_warmup_jobs() -> None:
    plan = _plan(precondition={"rw": "write", "bs": "1m", "size_factor": 2}, warmup={"runtime": "1s"})
    fill = precondition_job(plan)
    assert fill is not None
    assert dict(fill.options) == {
        "filename": "f.dat",
        "size": "1m",
        "ioengine": "null",
        "loops": "2",
        "rw": "write",
        "bs": "1m",
    }
    warm = warmup_job(plan, expand(plan)[0])
    assert warm is not None and dict(warm.options)["runtime"] == "1s"


def test_the_fill_of_an_nbd_export_goes_to_its_uri() -> None:
    base = {"ioengine": "nbd", "uri": "nbd://127.0.0.1/e", "size": "1m", "rw": "randread"}
    plan = parse_plan({"plan": {"name": "p"}, "base": base, "precondition": {"rw": "write", "bs": "128k"}})
    fill = precondition_job(plan)
    assert fill is not None and dict(fill.options)["uri"] == "nbd://127.0.0.1/e"
    bad = _plan(precondition={"rw": "sideways"})
    with pytest.raises(JobError, match=r"^precondition: .*rw"):
        validate(bad, expand(bad))
