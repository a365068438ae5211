//! sim-ssd on the virtual clock: write amplification against the greedy-GC
//! formula, and the SNIA PTS shape (steady state well below fresh).

use super::ssd::{SsdModel, SsdParams};
use super::ssd_ftl::{Ftl, GC_RESERVE};
use super::{closed_loop_at, Rng, SimModel, SimOp, SimReq};

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
