"""The PTS tests' matrices and tracking cells, full and shrunk."""

from __future__ import annotations

import pytest
from iolab.errors import JobError
from iolab.pts.matrix import pts_test


def test_iops_is_seven_mixes_by_eight_block_sizes_tracking_random_4k_writes() -> None:
    (stage,) = pts_test("iops").stages
    assert len(stage.cells) == 56 and stage.metric == "iops"
    assert stage.cells[stage.tracking].params == (
        ("rw", "randrw"), ("rwmixread", 0), ("bs", "4k"), ("numjobs", 4), ("iodepth", 32),
    )  # fmt: skip
    # outer loop the mix, inner the block size, largest first
    assert [c.label for c in stage.cells[:3]] == ["1024k 100/0", "128k 100/0", "64k 100/0"]
    assert stage.cells[-1].label == "512 0/100"


def test_latency_runs_nine_cells_at_one_thread_qd1() -> None:
    (stage,) = pts_test("latency").stages
    assert len(stage.cells) == 9 and stage.metric == "lat_mean_ns"
    assert {(c.param("numjobs"), c.param("iodepth")) for c in stage.cells} == {(1, 1)}
    assert stage.cells[stage.tracking].label == "4k 0/100"


def test_throughput_wsat_dirth_and_variants() -> None:
    stages = pts_test("throughput").stages
    assert [s.name for s in stages] == ["1024k seq write", "1024k seq read", "128k seq write", "128k seq read"]
    assert all(s.metric == "bw_bytes_per_s" for s in stages)
    wsat = pts_test("wsat", "client")
    assert not wsat.wipc and wsat.stages[0].until_written
    assert wsat.stages[0].cells[0].params[2:] == (("numjobs", 2), ("iodepth", 16))
    (dirth,) = pts_test("dirth").stages
    assert len(dirth.cells) == 36 and dirth.cells[dirth.tracking].label == "T32Q32"


def test_quick_shrinks_and_keeps_the_tracking_cell() -> None:
    for name, n in (("iops", 6), ("latency", 2), ("dirth", 9)):
        (stage,) = pts_test(name, quick=True).stages
        assert len(stage.cells) == n
    (dirth,) = pts_test("dirth", quick=True).stages
    assert dirth.cells[dirth.tracking].label == "T4Q4"


def test_unknown_test_and_variant() -> None:
    with pytest.raises(JobError, match="unknown PTS test 'speed': choose one of iops, throughput"):
        pts_test("speed")
    with pytest.raises(JobError, match="--variant home: choose one of enterprise, client"):
        pts_test("iops", "home")
