//! raid5: striping with one rotating parity strip per row.
//!
//! Parameters: `members` (at least 3), `member`, `strip` (default 64k),
//! `failed` (one member at most) — see raid.rs.
//!
//! Layout: Linux md's default, left-symmetric. Row `r` keeps its parity on
//! member `p = (N-1) - (r mod N)` and its data strips on members `p+1`,
//! `p+2`, … (mod N), so a sequential stream visits every member in turn.
//! Size: `(N-1) x member size`.
//!
//! Writes, per row, over the hull `U` of the row's written ranges (offsets
//! within the strip):
//! - read-modify-write (rmw): read the old data of each written range and
//!   the old parity over `U`; parity ^= old ^ new; write the data and
//!   the parity: `k + 1` reads and `k + 1` writes for `k` strips touched;
//! - reconstruct-write (rcw): read, over `U`, every data strip the write
//!   does not cover, compute the parity from the whole row, write;
//! - the one that reads fewer member I/Os is chosen, rcw on a tie (as md's
//!   `handle_stripe_dirtying` counts them) — so a small write is 2 reads
//!   + 2 writes and a full-stripe write is N writes and no reads.
//!
//! The writes start when the reads have completed (a second phase); rows
//! proceed side by side. A row is locked while its parity is recomputed
//! (one lock at a time, so requests never deadlock).
//!
//! Each path is its own function in raid5/write.rs. A stripe cache
//! (raid5/stripes.rs) keeps the parity and the data of the
//! last 16 rows written, as md's does: a range found there is not read
//! (`stripe_cache_hits`) and counts as no read in the rmw/rcw choice.
//!
//! Degraded (one member failed): a read of a strip on the failed member
//! reads the same range of the other N-1 members and XORs them; a write
//! whose row has the failed member's data in play reads every surviving
//! member over `U` and reconstructs the lost data before computing the
//! parity; a write whose parity member failed writes only the data.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::{live, not_supported, totals, xor_into, Members, Phase, RaidCounters, Traffic};
use crate::proto::Errno;
use crate::stack::{fmt_bytes, BlockDev, BlockError, BlockResult, Caps, Counter, IoCtx, ZeroReq};

const ROW_LOCKS: usize = 256;

/// A RAID 5 array.
#[derive(Debug)]
pub struct Raid5 {
    pub members: Members,
    strip: u64,
    traffic: Traffic,
    rmw: AtomicU64,
    rcw: AtomicU64,
    full_stripe_writes: AtomicU64,
    degraded_reads: AtomicU64,
    degraded_writes: AtomicU64,
    rows: Vec<Mutex<()>>,
    pub(super) stripes: StripeCache,
    stripe_cache_hits: AtomicU64,
}

/// One data strip's part of a request: data index, offset in the strip,
/// length, and offset in the request's buffer.
#[derive(Debug, Clone, Copy)]
struct Piece {
    d: usize,
    within: u64,
    n: usize,
    at: usize,
}

impl Raid5 {
    pub fn new(devs: Vec<Arc<dyn BlockDev>>, strip: u64) -> Result<Raid5, String> {
        let members = Members::new(devs, "raid5", 3, Some(strip))?;
        Ok(Raid5 {
            members,
            strip,
            traffic: Traffic::default(),
            rmw: AtomicU64::new(0),
            rcw: AtomicU64::new(0),
            full_stripe_writes: AtomicU64::new(0),
            degraded_reads: AtomicU64::new(0),
            degraded_writes: AtomicU64::new(0),
            rows: (0..ROW_LOCKS).map(|_| Mutex::new(())).collect(),
            stripes: StripeCache::new(strip),
            stripe_cache_hits: AtomicU64::new(0),
        })
    }

    pub(super) fn n(&self) -> usize {
        self.members.len()
    }

    fn size_bytes(&self) -> u64 {
        self.members.member_bytes * (self.n() as u64 - 1)
    }

    fn parity_member(&self, row: u64) -> usize {
        self.n() - 1 - (row % self.n() as u64) as usize
    }

    fn data_member(&self, row: u64, d: usize) -> usize {
        (self.parity_member(row) + 1 + d) % self.n()
    }

    /// The request's pieces, grouped by row.
    fn rows_of(&self, offset: u64, len: usize) -> Vec<(u64, Vec<Piece>)> {
        let per_row = self.n() as u64 - 1;
        let mut out: Vec<(u64, Vec<Piece>)> = Vec::new();
        let (mut pos, end) = (offset, offset + len as u64);
        while pos < end {
            let k = pos / self.strip;
            let within = pos % self.strip;
            let n = (self.strip - within).min(end - pos) as usize;
            let (row, d) = (k / per_row, (k % per_row) as usize);
            let p = Piece {
                d,
                within,
                n,
                at: (pos - offset) as usize,
            };
            match out.last_mut() {
                Some((r, v)) if *r == row => v.push(p),
                _ => out.push((row, vec![p])),
            }
            pos += n as u64;
        }
        out
    }

    fn lock(&self, row: u64) -> std::sync::MutexGuard<'_, ()> {
        self.rows[(row % ROW_LOCKS as u64) as usize]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn two_failed(&self) -> BlockError {
        BlockError::new(Errno::Io, "raid5: more than one member has failed")
    }

    /// Fill `buf` with what failed member `skip` holds at `off`, from the
    /// other members (a degraded read).
    fn reconstruct(&self, phase: &mut Phase, skip: usize, buf: &mut [u8], off: u64) -> BlockResult {
        buf.fill(0);
        let mut tmp = vec![0u8; buf.len()];
        for m in (0..self.n()).filter(|&m| m != skip) {
            self.members.read(m, phase, &mut tmp, off)?;
            xor_into(buf, &tmp);
        }
        self.degraded_reads.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

impl RaidCounters for Raid5 {
    fn counter_values(&self) -> Vec<(String, u64)> {
        let mut v = self.traffic.counters();
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        v.push(("read_modify_writes".into(), load(&self.rmw)));
        v.push(("reconstruct_writes".into(), load(&self.rcw)));
        v.push(("full_stripe_writes".into(), load(&self.full_stripe_writes)));
        v.push(("degraded_reads".into(), load(&self.degraded_reads)));
        v.push(("degraded_writes".into(), load(&self.degraded_writes)));
        v.push(("stripe_cache_hits".into(), load(&self.stripe_cache_hits)));
        v.extend(self.members.counters());
        v
    }
}

impl BlockDev for Raid5 {
    fn caps(&self) -> Caps {
        self.members.caps(self.size_bytes(), self.strip)
    }

    fn describe(&self) -> String {
        format!(
            "raid5({},strip={}) <- {}",
            fmt_bytes(self.size_bytes()),
            fmt_bytes(self.strip),
            self.members.describe()
        )
    }

    fn read_at(&self, ctx: &mut IoCtx, buf: &mut [u8], offset: u64) -> BlockResult {
        let _in = self.members.enter();
        self.traffic.read(buf.len());
        if self.members.failed_count() > 1 {
            return Err(self.two_failed());
        }
        let mut phase = Phase::after(ctx);
        // Pieces that follow each other on one member become one read.
        let mut runs: Vec<(usize, u64, usize, usize)> = Vec::new();
        for (row, pieces) in self.rows_of(offset, buf.len()) {
            for p in pieces {
                let m = self.data_member(row, p.d);
                let off = row * self.strip + p.within;
                if self.members.is_failed(m) {
                    let _row = self.lock(row);
                    let out = &mut buf[p.at..p.at + p.n];
                    self.reconstruct(&mut phase, m, out, off)?;
                    continue;
                }
                match runs
                    .iter_mut()
                    .find(|r| r.0 == m && r.1 + r.3 as u64 == off)
                {
                    Some(r) if r.2 + r.3 == p.at => r.3 += p.n,
                    _ => runs.push((m, off, p.at, p.n)),
                }
            }
        }
        for (m, off, at, n) in runs {
            self.members
                .read(m, &mut phase, &mut buf[at..at + n], off)?;
        }
        phase.finish(ctx);
        Ok(())
    }

    fn write_at(&self, ctx: &mut IoCtx, buf: &[u8], offset: u64, fua: bool) -> BlockResult {
        let _in = self.members.enter();
        self.traffic.write(buf.len());
        let mut done = Phase::after(ctx);
        for (row, pieces) in self.rows_of(offset, buf.len()) {
            let w = self.write_row(ctx, row, &pieces, buf, fua)?;
            w.finish_into(&mut done);
        }
        done.finish(ctx);
        Ok(())
    }

    fn flush(&self, ctx: &mut IoCtx) -> BlockResult {
        let _in = self.members.enter();
        self.members.flush(ctx)
    }

    fn set_member_failed(&self, i: usize, failed: bool) -> Option<Result<String, String>> {
        Some(live::raid5(self, i, failed))
    }

    fn counters(&self) -> Vec<Counter> {
        totals(self.counter_values())
    }

    fn children(&self) -> Vec<Arc<dyn BlockDev>> {
        self.members.devs()
    }

    fn full_stripe_bytes(&self) -> Option<u64> {
        Some(self.strip * (self.n() as u64 - 1))
    }

    fn trim(&self, _ctx: &mut IoCtx, _offset: u64, _len: u64, _fua: bool) -> BlockResult {
        Err(not_supported("raid5", "trim"))
    }

    fn zero(&self, _: &mut IoCtx, _: ZeroReq) -> BlockResult {
        Err(not_supported("raid5", "write zeroes"))
    }
}

mod stripes;
mod write;
use stripes::StripeCache;

#[cfg(test)]
mod tests;
