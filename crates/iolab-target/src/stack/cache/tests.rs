//! cache tests: data always the newest through every policy, destage in
//! full stripes, read-ahead after two sequential reads, flush and FUA
//! reach the device below, holds on a full cache.

use super::*;
use crate::stack::delay::{DelayLayer, DelayParams};
use crate::stack::memory::MemoryDev;
use crate::stack::raid::raid0::tests::mem;
use crate::stack::raid::raid5::Raid5;

fn count(c: &CacheLayer, name: &str) -> u64 {
    c.counter_values()
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap()
        .1
}

fn over_raid5(p: CacheParams) -> (Arc<Raid5>, CacheLayer) {
    let r = Arc::new(Raid5::new(mem(6, 4 << 20), 64 << 10).unwrap());
    let c = CacheLayer::new(r.clone(), p).unwrap();
    (r, c)
}

fn member_total(r: &Raid5, what: &str) -> u64 {
    use crate::stack::raid::RaidCounters;
    r.counter_values()
        .into_iter()
        .filter(|(n, _)| n.starts_with("member") && n.ends_with(&format!(".{what}")))
        .map(|(_, v)| v)
        .sum()
}

#[test]
fn sequential_write_back_destages_full_stripes_without_reads() {
    let (r, c) = over_raid5(CacheParams::default());
    assert_eq!(c.stripe, 5 * (64 << 10));
    let chunk = vec![0x5au8; 64 << 10];
    for k in 0..20u64 {
        c.write_at(&mut IoCtx::new(), &chunk, k * (64 << 10), false)
            .unwrap();
    }
    // 20 x 64 KiB = 4 stripes of 320 KiB, each destaged once whole.
    assert_eq!(count(&c, "destages"), 4);
    assert_eq!(member_total(&r, "reads"), 0);
    assert_eq!(member_total(&r, "writes"), 4 * 6);
    assert_eq!(count(&c, "dirty_bytes"), 0);
}

#[test]
fn reads_see_dirty_data_and_flush_puts_it_below() {
    let (r, c) = over_raid5(CacheParams::default());
    let a = vec![1u8; 4096];
    c.write_at(&mut IoCtx::new(), &a, 8192, false).unwrap();
    let mut back = vec![0u8; 16384];
    c.read_at(&mut IoCtx::new(), &mut back, 0).unwrap();
    assert!(back[8192..12288] == a[..] && back[..8192].iter().all(|&b| b == 0));
    let mut below = vec![0u8; 4096];
    r.read_at(&mut IoCtx::new(), &mut below, 8192).unwrap();
    assert!(below.iter().all(|&b| b == 0), "write-back: not below yet");
    c.flush(&mut IoCtx::new()).unwrap();
    r.read_at(&mut IoCtx::new(), &mut below, 8192).unwrap();
    assert_eq!(below, a, "flush destaged it");
    // FUA goes below at once.
    c.write_at(&mut IoCtx::new(), &[2u8; 512], 1 << 20, true)
        .unwrap();
    r.read_at(&mut IoCtx::new(), &mut below[..512], 1 << 20)
        .unwrap();
    assert!(below[..512].iter().all(|&b| b == 2));
}

#[test]
fn random_io_matches_a_reference_under_every_policy() {
    for (write, read) in [
        (WritePolicy::Back, ReadPolicy::Adaptive),
        (WritePolicy::Back, ReadPolicy::Ahead),
        (WritePolicy::Through, ReadPolicy::Ahead),
        (WritePolicy::Back, ReadPolicy::None),
    ] {
        let p = CacheParams {
            write,
            read,
            size_bytes: 1 << 20,
            ahead_bytes: 256 << 10,
            ..Default::default()
        };
        let dev = Arc::new(MemoryDev::new(4 << 20).unwrap());
        let c = CacheLayer::new(dev.clone(), p).unwrap();
        let mut rng = fastrand::Rng::with_seed(11);
        let size = 4usize << 20;
        let mut reference = vec![0u8; size];
        for i in 0..2000 {
            let len = 512 * rng.usize(1..=64);
            let off = if i % 3 == 0 {
                512 * rng.usize(0..(size - len) / 512)
            } else {
                (i * 8192) % (size - len)
            };
            if rng.bool() {
                let data: Vec<u8> = (0..len).map(|_| rng.u8(..)).collect();
                c.write_at(&mut IoCtx::new(), &data, off as u64, rng.u8(..) < 10)
                    .unwrap();
                reference[off..off + len].copy_from_slice(&data);
            } else {
                let mut b = vec![0u8; len];
                c.read_at(&mut IoCtx::new(), &mut b, off as u64).unwrap();
                assert!(
                    b[..] == reference[off..off + len],
                    "{write:?}/{read:?} at {i}"
                );
            }
        }
        c.flush(&mut IoCtx::new()).unwrap();
        let mut all = vec![0u8; size];
        dev.read_at(&mut IoCtx::new(), &mut all, 0).unwrap();
        assert!(all == reference, "{write:?}/{read:?}: flushed data differs");
    }
}

#[test]
fn adaptive_reads_ahead_after_two_sequential_reads() {
    let p = CacheParams {
        read: ReadPolicy::Adaptive,
        ..Default::default()
    };
    let (_r, c) = over_raid5(p);
    let mut b = vec![0u8; 64 << 10];
    c.read_at(&mut IoCtx::new(), &mut b, 0).unwrap();
    assert_eq!(count(&c, "readahead_reads"), 0);
    c.read_at(&mut IoCtx::new(), &mut b, 64 << 10).unwrap();
    assert_eq!(count(&c, "readahead_reads"), 1);
    for k in 2..16u64 {
        c.read_at(&mut IoCtx::new(), &mut b, k * (64 << 10))
            .unwrap();
    }
    assert_eq!(count(&c, "read_misses"), 2);
    assert_eq!(count(&c, "read_hits"), 14);
    // Random reads never start it.
    let p = CacheParams {
        read: ReadPolicy::Adaptive,
        ..Default::default()
    };
    let (_r, c) = over_raid5(p);
    for k in [5u64, 1, 9, 3, 7] {
        c.read_at(&mut IoCtx::new(), &mut b, k * (128 << 10))
            .unwrap();
    }
    assert_eq!(count(&c, "readahead_reads"), 0);
}

#[test]
fn a_full_cache_holds_writes_until_destages_complete() {
    let slow = DelayParams {
        write: Duration::from_millis(50),
        ..Default::default()
    };
    let dev = Arc::new(DelayLayer::new(
        Arc::new(MemoryDev::new(8 << 20).unwrap()),
        slow,
    ));
    let p = CacheParams {
        size_bytes: 256 << 10,
        stripe_bytes: Some(64 << 10),
        ..Default::default()
    };
    let c = CacheLayer::new(dev, p).unwrap();
    let chunk = vec![1u8; 64 << 10];
    let t0 = Instant::now();
    let mut holds = Vec::new();
    for k in 0..8u64 {
        let mut x = IoCtx::new();
        c.write_at(&mut x, &chunk, k * (64 << 10), false).unwrap();
        holds.push(x.hold_until().unwrap() - t0);
    }
    // The first four fit (held for the hit cost only); the fifth waits
    // for a destage of 50 ms.
    assert!(holds[3] < Duration::from_millis(5), "{holds:?}");
    assert!(holds[4] >= Duration::from_millis(50), "{holds:?}");
}

/// As a `Layer` the cache forwards caps and the walk to the device
/// beneath, and publishes its counters with `dirty_bytes` as a gauge.
#[test]
fn a_layer_over_its_device() {
    let (r, c) = over_raid5(CacheParams::default());
    let c: Arc<dyn BlockDev> = Arc::new(c);
    assert_eq!(c.caps(), r.caps());
    assert_eq!(c.name(), "cache");
    assert_eq!(c.full_stripe_bytes(), None);
    let kids = c.children();
    assert_eq!(kids.len(), 1);
    assert!(std::ptr::addr_eq(Arc::as_ptr(&kids[0]), Arc::as_ptr(&r)));
    c.write_at(&mut IoCtx::new(), &[1u8; 4096], 0, false)
        .unwrap();
    let counters = c.counters();
    let dirty = counters.iter().find(|k| k.name == "dirty_bytes").unwrap();
    assert!(dirty.gauge && dirty.value == 4096, "{dirty:?}");
    assert!(counters
        .iter()
        .all(|k| k.gauge == (k.name == "dirty_bytes")));
}
