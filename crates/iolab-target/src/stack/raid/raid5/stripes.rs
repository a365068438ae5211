//! raid5's stripe cache: what the rows written last hold — their parity
//! and the data just written — kept in memory as Linux md's stripe cache
//! keeps a stripe's pages up to date after a write (16 rows of 64 KiB
//! strips on 6 members: 6 MiB, md's default of 256 stripes x 4 KiB x 6).
//!
//! Read-modify-write and reconstruct-write count a strip range that is
//! here as no read: sequential small writes re-read neither the parity
//! they have just written (on a disk with its write cache off, a whole
//! revolution) nor the data strips of the row written before them, so
//! the later strips of a row are written by reconstruct-write from memory.
//!
//! Per row and column (a data index, or [`PARITY`]): a strip-sized buffer
//! and the range of it that is known. Every write of a row updates it under
//! the row's lock; a degraded array clears it and does not use it.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

/// Rows kept.
pub const STRIPE_CACHE_ROWS: usize = 16;
/// The column of the parity strip.
pub const PARITY: usize = usize::MAX;

type Known = (Vec<u8>, u64, u64);

#[derive(Debug, Default)]
struct Rows {
    cols: HashMap<u64, HashMap<usize, Known>>,
    order: VecDeque<u64>,
}

/// Known contents of recently written rows.
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

    /// Column `col` of `row` over `[a, b)` (offsets in the strip), if known.
    pub fn get(&self, row: u64, col: usize, a: u64, b: u64) -> Option<Vec<u8>> {
        let rows = self.lock();
        let (buf, lo, hi) = rows.cols.get(&row)?.get(&col)?;
        (*lo <= a && b <= *hi).then(|| buf[a as usize..b as usize].to_vec())
    }

    /// Column `col` of `row` over `[a, a + data.len())` is now `data`.
    pub fn put(&self, row: u64, col: usize, a: u64, data: &[u8]) {
        let b = a + data.len() as u64;
        let strip = self.strip;
        let mut rows = self.lock();
        if !rows.cols.contains_key(&row) {
            if rows.order.len() >= STRIPE_CACHE_ROWS {
                if let Some(old) = rows.order.pop_front() {
                    rows.cols.remove(&old);
                }
            }
            rows.order.push_back(row);
        }
        let e = rows
            .cols
            .entry(row)
            .or_default()
            .entry(col)
            .or_insert_with(|| (vec![0u8; strip], a, a));
        e.0[a as usize..b as usize].copy_from_slice(data);
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
        rows.cols.clear();
        rows.order.clear();
    }
}
