"""sim-ssd's greedy-GC prediction, by hand."""

from __future__ import annotations

import math

import pytest
from iolab.pts.wa import SsdModel, greedy_wa

SPEC = "sim-ssd,capacity=16m,channels=1,dies=1,planes=2,buffer=64k,t_read=10us,t_prog=100us,t_erase=500us"


def test_greedy_wa_is_the_fixed_point() -> None:
    for alpha in (1.05, 1.2, 1.5, 3.0):
        wa = greedy_wa(alpha)
        u = 1 - 1 / wa
        assert u == pytest.approx(math.exp(-alpha * (1 - u)), abs=1e-9) and u < 1
    # docs/simulation.md: op 0.127 over 32768 pages of 128-page blocks on one plane → 4.81
    m = SsdModel.from_spec("sim-ssd,capacity=128m,channels=1,dies=1,planes=1,pages_per_block=128")
    assert m.blocks_per_plane == 289 and m.write_amplification() == pytest.approx(4.81, abs=0.01)
    with pytest.raises(ValueError, match="more physical than user pages"):
        greedy_wa(1.0)


def test_the_test_drive_by_hand() -> None:
    m = SsdModel.from_spec(SPEC)
    # 4096 user pages x 1.127 over 2 planes of 64-page blocks: 36.06 → 37 blocks a plane;
    # GC fills (37 - 2) x 64 x 2 = 4480 pages: alpha = 4480 / 4096 = 1.09375
    assert (m.user_pages, m.plane_count, m.blocks_per_plane) == (4096, 2, 37)
    assert m.alpha == pytest.approx(1.09375)
    wa = m.write_amplification()
    assert wa == pytest.approx(6.01, abs=0.01)
    # a host page: 100 us program + (WA-1) x 110 us copyback + WA/64 x 500 us erase, on 2 planes
    per_page_ns = 100_000 + (wa - 1) * 110_000 + wa / 64 * 500_000
    assert m.steady_random_write_iops() == pytest.approx(2 * 1e9 / per_page_ns)
    assert m.fob_random_write_iops() == pytest.approx(20_000)
