//! Truth tests for IO pacing: the pool bound, FIFO order, progress with no
//! cache at deep queue depth, and per-export limits against a slow export
//! hogging the pool (seed 004).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use super::*;

const KIB: usize = 1024;

fn params(buffers: usize, cache: usize, export_limit: Option<usize>) -> PacingParams {
    PacingParams {
        buffers,
        cache,
        unit_bytes: 128 * KIB,
        export_limit,
        groups: 0,
        retry: Default::default(),
    }
}

/// Run `threads` workers doing `ops` acquisitions each (sizes up to two
/// units, held for `hold`), checking the bound independently of the pool's
/// own accounting; returns the most buffers seen held at once.
fn hammer(p: &Arc<Pacer>, threads: u64, ops: usize, hold: Duration) -> usize {
    let held = Arc::new(AtomicUsize::new(0));
    let seen_max = Arc::new(AtomicUsize::new(0));
    let bound = p.params().buffers;
    let hs: Vec<_> = (0..threads)
        .map(|w| {
            let (p, held, seen_max) = (p.clone(), held.clone(), seen_max.clone());
            thread::spawn(move || {
                for i in 0..ops {
                    let len = if (i + w as usize).is_multiple_of(3) {
                        256 * KIB
                    } else {
                        4 * KIB
                    };
                    let g = p.acquire(w % 8, (w % 4) as usize, len).unwrap();
                    let now = held.fetch_add(g.units(), Ordering::SeqCst) + g.units();
                    assert!(now <= bound, "{now} buffers in use, pool has {bound}");
                    seen_max.fetch_max(now, Ordering::SeqCst);
                    thread::sleep(hold);
                    held.fetch_sub(g.units(), Ordering::SeqCst);
                    drop(g);
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    seen_max.load(Ordering::SeqCst)
}

#[test]
fn buffers_in_use_never_exceed_the_pool() {
    let p = Pacer::new(params(8, 2, None));
    let seen = hammer(&p, 48, 100, Duration::from_micros(50));
    let s = p.snapshot(false);
    assert!(s.in_use_max <= 8 && seen <= 8);
    assert_eq!(s.in_use_max, 8, "48 threads should fill a pool of 8");
    assert!(s.pending_max > 0, "the load should have made requests wait");
    assert_eq!(s.in_use, 0);
    assert_eq!(s.grants, 48 * 100);
    assert_eq!(s.wait_ns.count(), 48 * 100);
    assert!(s.wait_ns.max() > 0);
}

#[test]
fn waiters_are_served_in_arrival_order() {
    let p = Pacer::new(params(1, 0, None));
    let blocker = p.acquire(99, 0, 4 * KIB).unwrap();
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut hs = Vec::new();
    for i in 0..8u64 {
        let (p2, order) = (p.clone(), order.clone());
        hs.push(thread::spawn(move || {
            let g = p2.acquire(i, 0, 4 * KIB).unwrap();
            order.lock().unwrap().push(i);
            drop(g);
        }));
        // Wait until this one is queued before starting the next.
        while p.snapshot(false).pending < (i + 1) as usize {
            thread::yield_now();
        }
    }
    drop(blocker);
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(*order.lock().unwrap(), (0..8).collect::<Vec<_>>());
}

#[test]
fn no_cache_at_deep_queue_depth_makes_progress() {
    // Seed 004's hang configuration: cache 0, far more requests than buffers.
    let p = Pacer::new(params(4, 0, None));
    let (tx, rx) = mpsc::channel();
    let p2 = p.clone();
    thread::spawn(move || {
        hammer(&p2, 64, 50, Duration::from_micros(20));
        tx.send(()).unwrap();
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("64 x 50 requests on 4 buffers with no cache finished");
    assert_eq!(p.snapshot(false).grants, 64 * 50);
}

#[test]
fn buffers_cached_by_idle_workers_do_not_starve_others() {
    // Two workers fill their caches with the whole pool, then go idle;
    // in SPDK a third worker's request would wait for ever.
    let p = Pacer::new(params(6, 3, None));
    for w in [1, 2] {
        drop(p.acquire(w, 0, 3 * 128 * KIB).unwrap());
    }
    let s = p.snapshot(false);
    assert_eq!((s.cached, s.in_use), (6, 0));
    let g = p.acquire(3, 0, 4 * KIB).unwrap();
    assert_eq!(p.snapshot(false).steals, 1);
    drop(g);
    p.retire(1);
    p.retire(2);
    assert_eq!(
        p.snapshot(false).cached,
        1,
        "worker 3 keeps the one it used"
    );
}

#[test]
fn oversized_requests_are_refused_not_queued() {
    let p = Pacer::new(params(4, 0, Some(2)));
    let AcquireError::TooLarge(e) = p.acquire(0, 0, 3 * 128 * KIB).unwrap_err() else {
        panic!("not refused as too large")
    };
    assert_eq!(e.max, 2);
    assert!(e.to_string().contains("3 pacing buffers"));
    assert_eq!(p.snapshot(false).refused, 1);
}

#[test]
fn bad_parameters_name_the_key() {
    let cases = [
        (params(0, 0, None), "pacing.buffers"),
        (params(4, 5, None), "pacing.cache"),
        (params(4, 0, Some(0)), "pacing.export_limit"),
        (params(4, 0, Some(5)), "pacing.export_limit"),
        (
            PacingParams {
                unit_bytes: 1000,
                ..params(4, 0, None)
            },
            "pacing.unit",
        ),
    ];
    for (p, key) in cases {
        assert!(p.validate().unwrap_err().contains(key), "{p:?}");
    }
    assert!(params(96, 6, Some(32)).validate().is_ok());
}

#[test]
fn snapshot_reset_restarts_counters() {
    let p = Pacer::new(params(4, 1, None));
    let g = p.acquire(0, 0, 4 * KIB).unwrap();
    let s = p.snapshot(true);
    assert_eq!((s.grants, s.in_use), (1, 1));
    let s = p.snapshot(false);
    assert_eq!((s.grants, s.in_use, s.in_use_max), (0, 1, 1));
    assert!(s.wait_ns.is_empty());
    drop(g);
}

/// Fast-export requests completed in `run_for` while 16 threads keep a
/// slow export (5 ms per request) busy on a pool of 8.
fn fast_ops_beside_slow(limit: Option<usize>, run_for: Duration) -> u64 {
    let p = Pacer::new(params(8, 0, limit));
    let stop = Arc::new(AtomicBool::new(false));
    let fast_ops = Arc::new(AtomicU64::new(0));
    let mut hs = Vec::new();
    for w in 0..20u64 {
        let (p, stop, fast_ops) = (p.clone(), stop.clone(), fast_ops.clone());
        let slow = w < 16;
        hs.push(thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let g = p.acquire(w, usize::from(!slow), 4 * KIB).unwrap();
                if slow {
                    thread::sleep(Duration::from_millis(5));
                } else {
                    thread::sleep(Duration::from_micros(100));
                    fast_ops.fetch_add(1, Ordering::Relaxed);
                }
                drop(g);
            }
        }));
    }
    let t0 = Instant::now();
    thread::sleep(run_for);
    stop.store(true, Ordering::Relaxed);
    let n = fast_ops.load(Ordering::Relaxed);
    for h in hs {
        h.join().unwrap();
    }
    assert!(t0.elapsed() >= run_for);
    n
}

#[test]
fn export_limit_keeps_the_fast_export_going() {
    let run_for = Duration::from_millis(600);
    let shared = fast_ops_beside_slow(None, run_for);
    let limited = fast_ops_beside_slow(Some(4), run_for);
    eprintln!("fast export ops in {run_for:?}: no limit {shared}, export_limit=4 {limited}");
    // Without a limit the fast export queues behind 5 ms slow requests;
    // with one it keeps 4 buffers to itself. The gap is ~10x; ask for 2x.
    assert!(
        limited >= 2 * shared.max(1),
        "no limit {shared}, limit {limited}"
    );
}

fn spdk(buffers: usize, cache: usize, groups: usize) -> Arc<Pacer> {
    Pacer::new(PacingParams {
        groups,
        retry: Retry::Same,
        ..params(buffers, cache, None)
    })
}

/// Wait (bounded) until `n` requests are pending.
fn until_pending(p: &Pacer, n: usize) {
    let t0 = Instant::now();
    while p.snapshot(false).pending < n {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "no waiter after 10 s"
        );
        thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn retry_same_starves_a_group_with_nothing_in_flight_and_close_ends_it() {
    // Two groups (connections 0 and 1), B = 2, no cache: group 0 holds both.
    let p = spdk(2, 0, 2);
    let a = p.acquire(0, 0, 256 * KIB).unwrap();
    let (tx, rx) = mpsc::channel();
    let p2 = p.clone();
    let h = thread::spawn(move || tx.send(p2.acquire(1, 1, 128 * KIB).map(|g| g.units())));
    until_pending(&p, 1);
    // Group 0's release frees the pool, but only group 0's waiters are retried.
    drop(a);
    thread::sleep(Duration::from_millis(50));
    assert!(
        rx.try_recv().is_err(),
        "group 1 was served by group 0's release"
    );
    let s = p.snapshot(false);
    assert_eq!(s.free, 2);
    assert_eq!(s.waiting.len(), 1);
    let w = &s.waiting[0];
    assert_eq!(
        (w.conn, w.group, w.export, w.units, w.group_in_use),
        (1, 1, 1, 1, 0)
    );
    assert!(w.waited_ns >= 50_000_000, "{}", w.waited_ns);
    p.close();
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(10)).unwrap(),
        Err(AcquireError::Closed)
    );
    h.join().unwrap().unwrap();
}

#[test]
fn retry_any_serves_the_same_waiter() {
    let p = Pacer::new(PacingParams {
        groups: 2,
        ..params(2, 0, None)
    });
    let a = p.acquire(0, 0, 256 * KIB).unwrap();
    let p2 = p.clone();
    let h = thread::spawn(move || p2.acquire(1, 1, 128 * KIB).map(|g| g.units()));
    until_pending(&p, 1);
    drop(a);
    assert_eq!(h.join().unwrap(), Ok(1));
}

#[test]
fn retry_same_hands_a_release_to_its_own_groups_waiter_and_a_cache_keeps_a_group_going() {
    // Two groups, cache 1: each starts with one buffer cached; the pool has one.
    let p = spdk(3, 1, 2);
    assert_eq!((p.snapshot(false).cached, p.snapshot(false).free), (2, 1));
    let a = p.acquire(0, 0, 256 * KIB).unwrap(); // group 0's cache + the pool
    let p2 = p.clone();
    // Connection 2 is in group 0: it waits for group 0's release.
    let h = thread::spawn(move || p2.acquire(2, 0, 128 * KIB).map(|g| g.units()));
    until_pending(&p, 1);
    // Group 1 is served from its own cache while the pool is empty, and its
    // release retries nobody of group 0.
    let b = p.acquire(1, 1, 128 * KIB).unwrap();
    assert_eq!(p.snapshot(false).free, 0);
    drop(b);
    thread::sleep(Duration::from_millis(50));
    assert_eq!(p.snapshot(false).pending, 1);
    drop(a);
    assert_eq!(h.join().unwrap(), Ok(1));
}
