//! SPRandom against its model's own equations, on the offsets it gives.

use std::collections::HashMap;

use super::*;

#[test]
fn validity_curve_runs_from_the_gc_block_to_full() {
    // Two regions: no resampling moves the points; reversed.
    let op = 0.15;
    let v_gc = 1.0 - 1.0 / (0.5 / op + 0.7);
    let v = validity_per_region(2, op);
    assert!(
        (v[0] - v_gc).abs() < 1e-12 && (v[1] - 1.0).abs() < 1e-12,
        "{v:?}"
    );
    let v = validity_per_region(100, op);
    assert!((v[0] - v_gc).abs() < 1e-9 && (v[99] - 1.0).abs() < 1e-9);
    assert!(
        v.windows(2).all(|w| w[0] <= w[1]),
        "validity grows with age order"
    );
    // Equal spacing in the running sum of 1/v puts more regions at low
    // validity than equal spacing in v would: the midpoint is below the
    // mean of the ends.
    assert!(v[50] < (v_gc + 1.0) / 2.0, "{}", v[50]);
    assert_eq!(physical_bytes(1 << 20, 0.15, 4096), 1_204_224);
}

#[test]
fn each_region_gets_its_share_of_invalid_writes() {
    let (logical, bs, op, regions) = (64u64 << 20, 4096, 0.15, 10);
    let mut w = SprWalk::new(logical, bs, op, regions, 0, 1).unwrap();
    w.restart(3);
    let mut offs = Vec::new();
    while let Some((o, last)) = w.next() {
        offs.push(o);
        if last {
            break;
        }
    }
    assert_eq!(w.next(), None);
    let blocks = logical / bs;
    let phys_writes = physical_bytes(logical, op, bs) / bs;
    // Every logical block is written; the rewrites fill up to the physical size.
    let mut last_at: HashMap<u64, usize> = HashMap::new();
    for (i, o) in offs.iter().enumerate() {
        last_at.insert(*o, i);
    }
    assert_eq!(last_at.len() as u64, blocks);
    let n = offs.len() as u64;
    assert!(
        n <= phys_writes + w.region_writes() && n >= blocks,
        "{n} writes"
    );
    // A write is invalid when its block is written again later. Per region,
    // the share must be the model's 1 − validity, within 5 sd of a binomial.
    let rw = w.region_writes() as usize;
    let validity = validity_per_region(regions as usize, op);
    for (r, v) in validity.iter().enumerate().take(regions as usize - 1) {
        let span = r * rw..((r + 1) * rw).min(offs.len());
        let invalid = span.clone().filter(|&i| last_at[&offs[i]] != i).count();
        let p = 1.0 - v;
        let got = invalid as f64 / rw as f64;
        let sd = (p * (1.0 - p) / rw as f64).sqrt();
        assert!(
            (got - p).abs() < 5.0 * sd + 1e-9,
            "region {r}: {got:.4} invalid, model {p:.4}"
        );
    }
}

#[test]
fn with_a_cache_the_rewrites_come_at_the_end_of_the_next_region() {
    let (logical, bs) = (8u64 << 20, 4096);
    let mut w = SprWalk::new(logical, bs, 0.2, 4, 64 << 10, 5).unwrap();
    w.restart(1);
    let rw = w.region_writes() as usize;
    let mut offs = Vec::new();
    while let Some((o, _)) = w.next() {
        offs.push(o);
    }
    // Region 1's first writes are fresh blocks (no block of region 0 again).
    let first: std::collections::HashSet<u64> = offs[..rw].iter().copied().collect();
    assert!(offs[rw..rw + rw / 2].iter().all(|o| !first.contains(o)));
    assert!(
        offs[rw..2 * rw].iter().any(|o| first.contains(o)),
        "rewrites at the end"
    );
    let e = SprWalk::new(logical, bs, 0.2, 4, 8 << 20, 5)
        .unwrap_err()
        .to_string();
    assert!(e.contains("smaller than a region"), "{e}");
}
