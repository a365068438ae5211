"""Each methodology warning: triggered by the setup it warns about, silent otherwise."""

from __future__ import annotations

from typing import Any, Optional

import pytest
from iolab.analysis.model import CpuFigures, Dataset, Finding
from iolab.analysis.tables import build_rows
from iolab.analysis.warnings import (
    buffered_fits_ram,
    buffered_io_uring,
    caches_not_dropped,
    cpu_steal,
    frequency_scaling,
    incomplete,
    no_warmup,
    one_queue_depth,
    other_device_io,
    random_only_bandwidth,
    single_repeat,
    too_few_samples,
)

from analysis.synth import dataset, device, point, qd_sweep, sample

GIB = 2**30


def _ds(repeats: int = 2, depths: tuple[int, ...] = (1, 32), **kw: Any) -> Dataset:
    return qd_sweep(list(depths), lambda qd: 1000.0 * qd, repeats=repeats, **kw)


def _run(rule: Any, ds: Dataset) -> Optional[Finding]:
    got: Optional[Finding] = rule(ds, build_rows(ds))
    assert got is None or got.severity == "warning"
    return got


def test_buffered_io_on_a_working_set_that_fits_in_ram() -> None:
    w = _run(buffered_fits_ram, _ds(direct=False, size_bytes=GIB))
    assert w is not None and "1 GiB per job, 16 GiB of memory" in w.text and w.points == [1, 2]
    assert _run(buffered_fits_ram, _ds(direct=True, size_bytes=GIB)) is None
    assert _run(buffered_fits_ram, _ds(direct=False, size_bytes=64 * GIB)) is None


def test_too_few_samples_for_the_percentile() -> None:
    # 1000 latencies: 1 beyond p99.9, 10 needed.
    w = _run(too_few_samples, _ds(repeats=1, count=1000))
    assert w is not None and w.figures["percentile"] == 99.9 and w.figures["needed"] == pytest.approx(10_000)
    assert "p99.9" in w.text
    assert _run(too_few_samples, _ds(repeats=1, count=1_000_000)) is None


def test_no_warmup() -> None:
    cold = _ds()
    cold.plan["warmup"] = False
    w = _run(no_warmup, cold)
    assert w is not None and w.kind == "warn_no_warmup"
    ramped = _ds(ramp_time_ns=5 * 10**9)
    ramped.plan["warmup"] = False
    assert _run(no_warmup, ramped) is None
    assert _run(no_warmup, _ds()) is None  # the plan had a [warmup]


def test_random_small_blocks_given_only_as_bandwidth() -> None:
    ds = _ds()
    for p in ds.points:
        for s in p.samples:
            s.read.iops = 0.0  # a source that recorded bytes per second only
    w = _run(random_only_bandwidth, ds)
    assert w is not None and w.points == [1, 2]
    assert _run(random_only_bandwidth, _ds()) is None
    seq = _ds(rw="read")
    for p in seq.points:
        for s in p.samples:
            s.read.iops = 0.0
    assert _run(random_only_bandwidth, seq) is None


def test_one_queue_depth_only() -> None:
    w = _run(one_queue_depth, _ds(depths=(8,)))
    assert w is not None and w.figures == {"outstanding": 8}
    assert _run(one_queue_depth, _ds(depths=(1, 32))) is None


def test_cpu_steal() -> None:
    ds = _ds(cpu=CpuFigures(steal_pct=5.0))
    ds.host["virtualization"] = {"virtualized": True, "kind": "kvm"}
    w = _run(cpu_steal, ds)
    assert w is not None and "5.00% of all CPUs" in w.text and "kvm VM" in w.text
    assert _run(cpu_steal, _ds(cpu=CpuFigures(steal_pct=0.5))) is None
    assert _run(cpu_steal, _ds()) is None


def test_a_container_is_called_a_container_not_a_vm() -> None:
    # Issue 21 item 9: systemd-detect-virt's "docker" was written "a docker VM" (findings, host facts).
    from iolab.report.analysis_text import host_line

    ds = _ds(cpu=CpuFigures(steal_pct=5.0))
    ds.host["virtualization"] = {"virtualized": True, "kind": "docker"}
    w = _run(cpu_steal, ds)
    assert w is not None and "in a docker container, whose host is a VM" in w.text and "docker VM" not in w.text
    assert host_line(ds.host).endswith("in a docker container")
    assert host_line({"hostname": "h", "virtualization": {"kind": "kvm"}}) == "h, in a kvm VM"
    assert host_line({"hostname": "h", "virtualization": {"kind": "none"}}) == "h"


def test_cpu_frequency_scaling_not_fixed() -> None:
    ds = _ds()
    ds.host["cpu"] = {"scaling_governors": ["performance", "powersave"]}
    w = _run(frequency_scaling, ds)
    assert w is not None and "governor powersave" in w.text
    assert _run(frequency_scaling, _ds()) is None  # performance everywhere
    unknown = _ds()
    unknown.host["cpu"] = {"scaling_governors": None}
    assert _run(frequency_scaling, unknown) is None


def test_single_repeat() -> None:
    w = _run(single_repeat, _ds(repeats=1))
    assert w is not None and w.points == [1, 2]
    assert _run(single_repeat, _ds(repeats=2)) is None


def test_other_io_on_the_device() -> None:
    # iolab: 1000 and 32000 I/Os of 4 KiB; the device completed 320000 at each: point 1 is the worst.
    busy = qd_sweep([1, 32], lambda qd: 1000.0 * qd, repeats=1, device=device(50.0, 320_000, 320_000 * 4096))
    w = _run(other_device_io, busy)
    assert w is not None and w.points == [1] and w.figures["device"] == "nvme0n1"
    assert "completed 320000 I/Os and 1.22 GiB, iolab did 1000 I/Os and 3.91 MiB" in w.text
    own = dataset([point(1, {"iodepth": 1}, [sample(1000.0, device=device(50.0, 1000, 1000 * 4096))])])
    assert _run(other_device_io, own) is None
    buffered = dataset([point(1, {}, [sample(1000.0, direct=False, device=device(50.0, 10**6, 10**6 * 4096))])])
    assert _run(other_device_io, buffered) is None
    no_bytes = dataset([point(1, {}, [sample(1000.0, device=device(50.0, 10**6, 0, bytes_known=False))])])
    assert _run(other_device_io, no_bytes) is not None


def test_page_cache_drop_failed() -> None:
    failed = _ds()
    failed.plan["drop_caches"] = "failed"
    assert _run(caches_not_dropped, failed) is not None
    failed.plan["drop_caches"] = "dropped"
    assert _run(caches_not_dropped, failed) is None


def _engine(iops: float, engine: str, qd: int, direct: bool = False):  # type: ignore[no-untyped-def]
    s = sample(iops, iodepth=qd, direct=direct)
    s.config.ioengine = engine
    return s


def test_buffered_io_uring_slower_than_psync_quotes_both() -> None:
    # issue #13: tmpfs without O_DIRECT, io_uring punted to io-wq: 13.5k IOPS at QD 32 vs psync 525k at QD 1
    punted = dataset([point(1, {"job": "qd1"}, [_engine(525_000.0, "psync", 1)]),
                      point(2, {"job": "qd32"}, [_engine(13_500.0, "io_uring", 32)])])  # fmt: skip
    w = _run(buffered_io_uring, punted)
    assert w is not None and w.points == [1, 2]
    assert "QD 32 (qd32: 13.5k IOPS)" in w.text and "psync at QD 1" in w.text and "525k IOPS" in w.text, w.text
    # counterexamples: the queue helped; or O_DIRECT (no punting to speak of); or no psync figure to compare with
    fine = dataset([point(1, {"job": "a"}, [_engine(100_000.0, "psync", 1)]),
                    point(2, {"job": "b"}, [_engine(300_000.0, "io_uring", 32)])])  # fmt: skip
    assert _run(buffered_io_uring, fine) is None
    direct = dataset([point(1, {"job": "a"}, [_engine(100_000.0, "psync", 1, True)]),
                      point(2, {"job": "b"}, [_engine(50_000.0, "io_uring", 32, True)])])  # fmt: skip
    assert _run(buffered_io_uring, direct) is None
    assert _run(buffered_io_uring, dataset([point(1, {}, [_engine(10.0, "io_uring", 32)])])) is None


def test_incomplete_sweep_and_its_counterexample() -> None:
    ds = _ds()
    ds.plan.update(planned_runs=10, finished_runs=4)
    w = _run(incomplete, ds)
    assert w is not None and "4 of 10 planned runs finished" in w.text and w.score == 100.0
    ds.plan.update(planned_runs=4, finished_runs=4)
    assert _run(incomplete, ds) is None
