//! raid5 tests: exact member I/O counts, data against a reference copy,
//! parity consistency, degraded reads and writes.

use super::*;
use crate::stack::raid::raid0::tests::mem;

fn count(r: &Raid5, name: &str) -> u64 {
    r.counter_values()
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap()
        .1
}

fn total(r: &Raid5, what: &str) -> u64 {
    (0..r.n())
        .map(|i| count(r, &format!("member{i}.{what}")))
        .sum()
}

const STRIP: u64 = 4096;

fn array(n: usize) -> Raid5 {
    Raid5::new(mem(n, 256 * STRIP), STRIP).unwrap()
}

/// Every row's strips XOR to zero.
fn assert_parity(r: &Raid5) {
    let rows = r.members.member_bytes / STRIP;
    for row in 0..rows {
        let mut acc = vec![0u8; STRIP as usize];
        let mut tmp = vec![0u8; STRIP as usize];
        for m in 0..r.n() {
            let dev = &r.members.get(m).dev;
            dev.read_at(&mut IoCtx::new(), &mut tmp, row * STRIP)
                .unwrap();
            xor_into(&mut acc, &tmp);
        }
        assert!(acc.iter().all(|&b| b == 0), "row {row} parity is wrong");
    }
}

#[test]
fn small_write_is_two_reads_and_two_writes() {
    let r = array(6);
    r.write_at(&mut IoCtx::new(), &[1u8; 4096], 3 * STRIP, false)
        .unwrap();
    assert_eq!((total(&r, "reads"), total(&r, "writes")), (2, 2));
    assert_eq!(count(&r, "read_modify_writes"), 1);
    // A part of a strip: still 2 + 2, over the part only.
    r.write_at(&mut IoCtx::new(), &[2u8; 512], 7 * STRIP + 1024, false)
        .unwrap();
    assert_eq!((total(&r, "reads"), total(&r, "writes")), (4, 4));
    assert_eq!(total(&r, "read_bytes"), 2 * 4096 + 2 * 512);
    assert_parity(&r);
}

#[test]
fn full_stripe_write_is_n_writes_and_no_reads() {
    let r = array(6);
    let row = vec![9u8; 5 * STRIP as usize];
    r.write_at(&mut IoCtx::new(), &row, 10 * STRIP, false)
        .unwrap();
    assert_eq!((total(&r, "reads"), total(&r, "writes")), (0, 6));
    assert_eq!(count(&r, "full_stripe_writes"), 1);
    assert_parity(&r);
}

#[test]
fn four_of_five_strips_reconstruct_with_one_read() {
    let r = array(6);
    let four = vec![3u8; 4 * STRIP as usize];
    r.write_at(&mut IoCtx::new(), &four, 0, false).unwrap();
    // rmw would read 5; rcw reads the one strip not written.
    assert_eq!((total(&r, "reads"), total(&r, "writes")), (1, 5));
    assert_eq!(count(&r, "reconstruct_writes"), 1);
    assert_parity(&r);
}

#[test]
fn degraded_read_is_n_minus_1_reads() {
    let r = array(6);
    let data: Vec<u8> = (0..5 * STRIP).map(|i| (i % 241) as u8).collect();
    r.write_at(&mut IoCtx::new(), &data, 0, false).unwrap();
    // Row 0: parity on member 5, data index 0 on member 0.
    r.members.fail(0);
    let before = total(&r, "reads");
    let mut back = vec![0u8; STRIP as usize];
    r.read_at(&mut IoCtx::new(), &mut back, 0).unwrap();
    assert_eq!(total(&r, "reads") - before, 5);
    assert_eq!(back[..], data[..STRIP as usize]);
    assert_eq!(count(&r, "degraded_reads"), 1);
}

/// Random writes of random sizes against a reference copy; after each
/// batch every member in turn is failed and the array still reads back
/// the reference; degraded writes keep it readable too.
#[test]
fn data_survives_random_writes_and_any_one_failure() {
    let mut rng = fastrand::Rng::with_seed(5);
    let r = array(5);
    let size = r.caps().size_bytes as usize;
    let mut reference = vec![0u8; size];
    let write_some = |r: &Raid5, reference: &mut Vec<u8>, rng: &mut fastrand::Rng| {
        for _ in 0..200 {
            let len = 512 * rng.usize(1..=40);
            let off = 512 * rng.usize(0..(size - len) / 512);
            let data: Vec<u8> = (0..len).map(|_| rng.u8(..)).collect();
            r.write_at(&mut IoCtx::new(), &data, off as u64, false)
                .unwrap();
            reference[off..off + len].copy_from_slice(&data);
        }
    };
    write_some(&r, &mut reference, &mut rng);
    assert_parity(&r);
    let mut back = vec![0u8; size];
    for m in 0..r.n() {
        r.members.fail(m);
        r.read_at(&mut IoCtx::new(), &mut back, 0).unwrap();
        assert!(back == reference, "member {m} failed: data differs");
        r.members.get_failed_reset(m);
    }
    // Degraded writes, then read back degraded.
    r.members.fail(2);
    write_some(&r, &mut reference, &mut rng);
    r.read_at(&mut IoCtx::new(), &mut back, 0).unwrap();
    assert!(back == reference, "degraded writes lost data");
    assert!(count(&r, "degraded_writes") > 0);
    let e = {
        r.members.fail(3);
        r.read_at(&mut IoCtx::new(), &mut back, 0).unwrap_err()
    };
    assert!(e.msg.contains("more than one member"), "{}", e.msg);
}

#[test]
fn reads_and_writes_hold_until_the_slowest_member() {
    use crate::stack::delay::{DelayLayer, DelayParams};
    use std::time::{Duration, Instant};
    let ms = Duration::from_millis;
    let devs: Vec<Arc<dyn BlockDev>> = mem(3, 64 * STRIP)
        .into_iter()
        .enumerate()
        .map(|(i, d)| {
            let p = DelayParams {
                read: ms(1 + i as u64),
                write: ms(10),
                ..Default::default()
            };
            Arc::new(DelayLayer::new(d, p)) as Arc<dyn BlockDev>
        })
        .collect();
    let r = Raid5::new(devs, STRIP).unwrap();
    let t0 = Instant::now();
    // Row 0: parity on member 2, data on 0 and 1: reads of 1 and 2 ms.
    let mut c = IoCtx::new();
    r.read_at(&mut c, &mut vec![0u8; 2 * STRIP as usize], 0)
        .unwrap();
    let held = c.hold_until().unwrap() - t0;
    assert!(held >= ms(2) && held < ms(3), "max, not sum: {held:?}");
    // A small write on 3 members reconstructs (1 read, of the other data
    // strip on member 1: 2 ms), then writes (10 ms).
    let t0 = Instant::now();
    let mut c = IoCtx::new();
    r.write_at(&mut c, &[1u8; 512], 0, false).unwrap();
    let held = c.hold_until().unwrap() - t0;
    assert!(
        held >= ms(12) && held < ms(13),
        "reads then writes: {held:?}"
    );
    assert_eq!(count(&r, "reconstruct_writes"), 1);
}

#[test]
fn the_stripe_cache_saves_the_parity_read_of_the_next_small_write() {
    let r = array(6);
    r.write_at(&mut IoCtx::new(), &[1u8; 4096], 0, false)
        .unwrap();
    r.write_at(&mut IoCtx::new(), &[2u8; 4096], STRIP, false)
        .unwrap();
    // The second write of row 0 reads only its old data.
    assert_eq!((total(&r, "reads"), total(&r, "writes")), (3, 4));
    assert_eq!(count(&r, "stripe_cache_hits"), 1);
    assert_parity(&r);
}
