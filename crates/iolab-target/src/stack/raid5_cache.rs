//! raid5's stripe cache: the parity of the rows written last, kept in
//! memory as Linux md's stripe cache keeps them (`stripe_cache_size`,
//! default 256), so a read-modify-write of a row whose parity was just
//! computed reads only the old data — sequential small writes then cost
//! one read, not a re-read of the parity strip they have just written
//! (which on a disk with its write cache off is a whole revolution).
//!
//! Per row: a strip-sized buffer and the range of it that is known. Every
//! write of a row updates it under the row's lock; a degraded array does
//! not use it (every write there reads what it needs).

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

/// Rows kept (md's default `stripe_cache_size`).
pub const STRIPE_CACHE_ROWS: usize = 256;

#[derive(Debug, Default)]
struct Rows {
    parity: HashMap<u64, (Vec<u8>, u64, u64)>,
    order: VecDeque<u64>,
}

/// Known parity of recently written rows.
#[derive(Debug)]
pub struct StripeCache {
    strip: usize,
    rows: Mutex<Rows>,
}

impl StripeCache {
    pub fn new(strip: u64) -> StripeCache {
        StripeCache {
            strip: strip as usize,
            rows: Mutex::new(Rows::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Rows> {
        self.rows.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The parity of `row` over `[a, b)` (offsets in the strip), if known.
    pub fn get(&self, row: u64, a: u64, b: u64) -> Option<Vec<u8>> {
        let rows = self.lock();
        let (buf, lo, hi) = rows.parity.get(&row)?;
        (*lo <= a && b <= *hi).then(|| buf[a as usize..b as usize].to_vec())
    }

    /// `row`'s parity over `[a, a + p.len())` is now `p`.
    pub fn put(&self, row: u64, a: u64, p: &[u8]) {
        let b = a + p.len() as u64;
        let mut rows = self.lock();
        let strip = self.strip;
        if !rows.parity.contains_key(&row) {
            if rows.order.len() >= STRIPE_CACHE_ROWS {
                if let Some(old) = rows.order.pop_front() {
                    rows.parity.remove(&old);
                }
            }
            rows.order.push_back(row);
        }
        let e = rows
            .parity
            .entry(row)
            .or_insert_with(|| (vec![0u8; strip], a, a));
        e.0[a as usize..b as usize].copy_from_slice(p);
        // Keep one known range: join it when the two touch, else the new one.
        if a <= e.2 && b >= e.1 && e.1 < e.2 {
            e.1 = e.1.min(a);
            e.2 = e.2.max(b);
        } else {
            e.1 = a;
            e.2 = b;
        }
    }

    /// Forget everything (a member failed: parity is no longer kept whole).
    pub fn clear(&self) {
        let mut rows = self.lock();
        rows.parity.clear();
        rows.order.clear();
    }
}
