//! sim-ssd on the virtual clock: write amplification against the greedy-GC
//! formula, and the SNIA PTS shape (steady state well below fresh).

use super::ssd::{SsdModel, SsdParams};
use super::ssd_ftl::{Ftl, GC_RESERVE};
use super::{closed_loop, closed_loop_at, Rng, SimModel, SimOp, SimReq};

/// Uniform random writes, greedy GC, fluid limit: a block is reclaimed
/// holding a share u of valid pages, where u = exp(−α(1 − u)) and α is
/// the pages GC can fill over the user pages; WA = 1/(1 − u).
fn greedy_wa(alpha: f64) -> f64 {
    let mut u = 0.0f64;
    for _ in 0..10_000 {
        u = (-alpha * (1.0 - u)).exp();
    }
    1.0 / (1.0 - u)
}

fn steady_wa(user_pages: u64, op: f64, ppb: u32) -> (f64, f64) {
    let bpp = ((user_pages as f64 * (1.0 + op)) / f64::from(ppb)).ceil() as u32;
    let mut f = Ftl::new(user_pages, 1, bpp, ppb);
    let mut r = Rng(42);
    for lpn in 0..user_pages {
        f.write(lpn);
    }
    for _ in 0..4 * user_pages {
        f.write(r.next_u64() % user_pages);
    }
    let (h0, n0) = (f.host_pages, f.nand_pages);
    for _ in 0..4 * user_pages {
        f.write(r.next_u64() % user_pages);
    }
    let wa = (f.nand_pages - n0) as f64 / (f.host_pages - h0) as f64;
    let alpha = f64::from((bpp - GC_RESERVE) * ppb) / user_pages as f64;
    (wa, greedy_wa(alpha))
}

#[test]
fn steady_state_wa_follows_the_greedy_formula() {
    for op in [0.127, 0.28, 0.5] {
        let (wa, truth) = steady_wa(32_768, op, 128);
        assert!(
            (wa / truth - 1.0).abs() < 0.10,
            "op {op}: WA {wa} vs formula {truth}"
        );
    }
}

#[test]
fn trim_lowers_write_amplification() {
    let (user, ppb) = (16_384u64, 64);
    let bpp = ((user as f64 * 1.127) / f64::from(ppb)).ceil() as u32;
    let run = |trim_half: bool| {
        let mut f = Ftl::new(user, 1, bpp, ppb);
        let mut r = Rng(3);
        for l in 0..user {
            f.write(l);
        }
        if trim_half {
            (user / 2..user).for_each(|l| f.trim(l));
        }
        let (h0, n0) = (f.host_pages, f.nand_pages);
        for _ in 0..4 * user {
            f.write(r.next_u64() % (user / 2));
        }
        (f.nand_pages - n0) as f64 / (f.host_pages - h0) as f64
    };
    let (kept, trimmed) = (run(false), run(true));
    assert!(trimmed < 0.6 * kept, "{trimmed} vs {kept}");
}

fn small() -> SsdParams {
    SsdParams {
        capacity_bytes: 64 << 20,
        channels: 2,
        dies: 2,
        planes: 1,
        ..SsdParams::default()
    }
}

/// SNIA PTS: random 4 KiB writes are fast fresh out of the box and fall
/// well below once GC must run (steady state).
#[test]
fn steady_state_falls_below_fresh_out_of_box() {
    let p = small();
    let mut m = SsdModel::new(p.clone());
    let pages = p.user_pages();
    let mut r = Rng(9);
    let mut gen = || SimReq::new(SimOp::Write, (r.next_u64() % pages) * 4096, 4096);
    let n = (pages / 2) as usize;
    let (_, fob_ns) = closed_loop_at(&mut m, 0, 32, n, &mut gen);
    let fob = n as f64 / fob_ns as f64;
    // Precondition: 3x the capacity more, then measure.
    let (_, t0) = closed_loop_at(&mut m, fob_ns, 32, 3 * pages as usize, &mut gen);
    let (c0, n0) = (m.ftl.host_pages, m.ftl.nand_pages);
    let (_, end) = closed_loop_at(&mut m, t0, 32, n, &mut gen);
    let steady = n as f64 / (end - t0) as f64;
    let wa = (m.ftl.nand_pages - n0) as f64 / (m.ftl.host_pages - c0) as f64;
    assert!(steady < 0.5 * fob, "steady {steady} vs FOB {fob} pages/ns");
    assert!(wa > 2.5, "{wa}");
}

#[test]
fn a_read_costs_overhead_sense_and_transfer() {
    let p = small();
    let mut m = SsdModel::new(p.clone());
    let w = m.submit(0, 0, SimReq::new(SimOp::Write, 8192, 4096));
    let ack = m.take_done(w).unwrap();
    assert_eq!(
        ack, p.overhead_ns,
        "buffered: acknowledged after the overhead"
    );
    let t = 10_000_000;
    let r = m.submit(t, t, SimReq::new(SimOp::Read, 8192, 4096));
    let xfer = (4096.0 * 1e9 / p.channel_bytes_per_s).ceil() as u64;
    let want = t + p.overhead_ns + p.read_ns + xfer;
    assert!(m.take_done(r).unwrap().abs_diff(want) <= 1);
    let u = m.submit(t, t, SimReq::new(SimOp::Read, 1 << 20, 4096));
    assert_eq!(
        m.take_done(u),
        Some(t + p.overhead_ns),
        "unmapped: no media"
    );
}

/// The lab's drive shape: the link is the bottleneck, `stage` holds four
/// 128 KiB reads.
fn linked(spill: f64) -> SsdModel {
    SsdModel::new(SsdParams {
        capacity_bytes: 256 << 20,
        op: 0.28,
        mapped: true,
        read_ns: 1_000_000,
        channel_bytes_per_s: 64e6,
        link_bytes_per_s: Some(8e6),
        stage_bytes: Some(4 << 17),
        spill,
        ..SsdParams::default()
    })
}

fn read_bw(m: &mut SsdModel, qd: usize) -> f64 {
    let size = m.params().capacity_bytes;
    let mut r = Rng(9);
    let (_, end) = closed_loop(m, qd, 4000, || {
        SimReq::new(SimOp::Read, r.offset(size, 128 << 10, 128 << 10), 128 << 10)
    });
    4000.0 * f64::from(128u32 << 10) / (end as f64 / 1e9)
}

#[test]
fn mapped_reads_of_unwritten_pages_take_the_nand_time() {
    let mut m = linked(0.0);
    let t = super::run_qd1(&mut m, 0, 0, &[SimReq::new(SimOp::Read, 0, 4096)]);
    // overhead + t_read + one page on the channel + one page on the link
    let want = 10_000.0 + 1e6 + 4096.0 / 64e6 * 1e9 + 4096.0 / 8e6 * 1e9;
    assert!((t[0] as f64 - want).abs() < 2.0, "{} vs {want}", t[0]);
}

#[test]
fn the_link_rate_bounds_reads_and_spilling_cuts_it_by_the_formula() {
    // Without spill the drive runs at its link rate at any depth.
    for qd in [4, 32] {
        let bw = read_bw(&mut linked(0.0), qd);
        assert!((bw / 8e6 - 1.0).abs() < 0.01, "qd {qd}: {bw}");
    }
    // With spill 0.3: no loss while four reads fit the stage; at QD 32 the
    // share 1 − 4/32 is spilled: rate / (1 + 0.3 × 0.875).
    let at4 = read_bw(&mut linked(0.3), 4);
    assert!((at4 / 8e6 - 1.0).abs() < 0.01, "{at4}");
    let at32 = read_bw(&mut linked(0.3), 32);
    let want = 8e6 / (1.0 + 0.3 * (1.0 - 4.0 / 32.0));
    assert!((at32 / want - 1.0).abs() < 0.01, "{at32} vs {want}");
    let m = linked(0.3);
    assert!(m.counters().iter().any(|&(k, _)| k == "spilled_bytes"));
}
