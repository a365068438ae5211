//! raid5's writes, a row at a time, one function per path (the choice
//! and the paths are described in raid5.rs):
//! - [`Raid5::write_row`]: the order of a row's write — mark what a failed
//!   member misses, lock the row, pick the path, write, keep the row in
//!   the stripe cache;
//! - [`Raid5::use_rmw`]: read-modify-write or reconstruct-write;
//! - [`Raid5::rmw_parity`]: read-modify-write's parity;
//! - [`Raid5::rcw_parity`]: reconstruct-write's parity, over
//!   [`Raid5::old_columns`] and, degraded, [`Raid5::lost_column`];
//! - [`Raid5::write_data_only`]: degraded, the row's parity member lost;
//! - [`Raid5::known`] and [`Raid5::remember`]: the stripe cache's part.

use std::sync::atomic::Ordering;

use super::stripes::PARITY;
use super::{Piece, Raid5};
use crate::stack::raid::{xor_into, Phase};
use crate::stack::{BlockError, IoCtx};

/// One row's part of a write, and the array's state for it.
struct RowWrite<'a> {
    row: u64,
    /// Where the row starts on every member.
    base: u64,
    pieces: &'a [Piece],
    /// The whole request's data (each piece says where its part is).
    buf: &'a [u8],
    /// The hull `[u0, u1)` of the row's written ranges, offsets in the strip.
    u0: u64,
    u1: u64,
    /// The row's parity member.
    pm: usize,
    /// The failed member, when one has failed.
    failed: Option<usize>,
}

impl RowWrite<'_> {
    fn ulen(&self) -> usize {
        (self.u1 - self.u0) as usize
    }

    /// What piece `p` writes.
    fn new_data(&self, p: &Piece) -> &[u8] {
        &self.buf[p.at..p.at + p.n]
    }

    /// Whether the write replaces data strip `d` over the whole hull.
    fn covers(&self, d: usize) -> bool {
        self.pieces
            .iter()
            .any(|p| p.d == d && p.within == self.u0 && p.n == self.ulen())
    }

    /// Whether the write touches data strip `d` at all.
    fn touches(&self, d: usize) -> bool {
        self.pieces.iter().any(|p| p.d == d)
    }
}

/// What the stripe cache holds of a row (nothing when degraded).
struct Known {
    /// The parity over the hull.
    parity: Option<Vec<u8>>,
    /// Per piece, the data it overwrites.
    old_data: Vec<Option<Vec<u8>>>,
    /// Per data strip the write does not cover, its data over the hull.
    rest: Vec<Option<Vec<u8>>>,
}

impl Known {
    /// Member reads read-modify-write needs: the old data and parity not known.
    fn rmw_reads(&self) -> usize {
        self.old_data.iter().filter(|o| o.is_none()).count() + usize::from(self.parity.is_none())
    }

    /// Member reads reconstruct-write needs: the strips neither covered nor known.
    fn rcw_reads(&self, w: &RowWrite<'_>) -> usize {
        (0..self.rest.len())
            .filter(|&d| !w.covers(d) && self.rest[d].is_none())
            .count()
    }
}

impl Raid5 {
    /// Write `pieces` of row `row`; the returned phase completes with the
    /// row's member writes.
    pub(super) fn write_row(
        &self,
        ctx: &IoCtx,
        row: u64,
        pieces: &[Piece],
        buf: &[u8],
        fua: bool,
    ) -> Result<Phase, BlockError> {
        let w = self.row_write(row, pieces, buf)?;
        if let Some(f) = w.failed {
            // The failed member's strip of this row changes (its data or
            // parity): a restore rebuilds it (live.rs).
            self.members.note_missed(f, w.base, self.strip);
        }
        let mut reads = Phase::after(ctx);
        let _row = self.lock(row);
        if w.failed.is_some() {
            self.stripes.clear();
        }
        if w.failed == Some(w.pm) {
            return self.write_data_only(&w, reads, fua);
        }
        let known = self.known(&w);
        let parity = if self.use_rmw(&w, &known) {
            self.rmw_parity(&w, known, &mut reads)?
        } else {
            self.rcw_parity(&w, known, &mut reads)?
        };
        let mut done = reads.then();
        for p in pieces {
            let m = self.data_member(row, p.d);
            if !self.members.is_failed(m) {
                self.members
                    .write(m, &mut done, w.new_data(p), w.base + p.within, fua)?;
            }
        }
        self.members
            .write(w.pm, &mut done, &parity, w.base + w.u0, fua)?;
        self.remember(&w, &parity);
        Ok(done)
    }

    /// Where row `row`'s write lies, and which member has failed (an
    /// error when more than one has).
    fn row_write<'a>(
        &self,
        row: u64,
        pieces: &'a [Piece],
        buf: &'a [u8],
    ) -> Result<RowWrite<'a>, BlockError> {
        let u0 = pieces.iter().map(|p| p.within).min().unwrap_or(0);
        let u1 = pieces
            .iter()
            .map(|p| p.within + p.n as u64)
            .max()
            .unwrap_or(0);
        let failed: Vec<usize> = (0..self.n())
            .filter(|&m| self.members.is_failed(m))
            .collect();
        if failed.len() > 1 {
            return Err(self.two_failed());
        }
        Ok(RowWrite {
            row,
            base: row * self.strip,
            pieces,
            buf,
            u0,
            u1,
            pm: self.parity_member(row),
            failed: failed.first().copied(),
        })
    }

    /// Read-modify-write or reconstruct-write. Degraded: read-modify-write
    /// exactly when the lost strip is not written (it needs only what
    /// survives). Healthy: the one with fewer member reads, reconstruct-
    /// write on a tie (md's `handle_stripe_dirtying`).
    fn use_rmw(&self, w: &RowWrite<'_>, known: &Known) -> bool {
        match w.failed.map(|f| (f + self.n() - w.pm - 1) % self.n()) {
            Some(lost) => !w.touches(lost),
            None => known.rmw_reads() < known.rcw_reads(w),
        }
    }

    /// Read-modify-write: parity ^= old ^ new over each written range,
    /// the old parity and data from the stripe cache or read.
    fn rmw_parity(
        &self,
        w: &RowWrite<'_>,
        known: Known,
        reads: &mut Phase,
    ) -> Result<Vec<u8>, BlockError> {
        self.rmw.fetch_add(1, Ordering::Relaxed);
        let at = w.base + w.u0;
        let mut parity = self.known_or_read(known.parity, w.pm, reads, w.ulen(), at)?;
        for (p, old) in w.pieces.iter().zip(known.old_data) {
            let m = self.data_member(w.row, p.d);
            let old = self.known_or_read(old, m, reads, p.n, w.base + p.within)?;
            let at = (p.within - w.u0) as usize;
            xor_into(&mut parity[at..at + p.n], &old);
            xor_into(&mut parity[at..at + p.n], w.new_data(p));
        }
        Ok(parity)
    }

    /// Reconstruct-write: the parity of the whole row over the hull, the
    /// new data laid over the old columns.
    fn rcw_parity(
        &self,
        w: &RowWrite<'_>,
        known: Known,
        reads: &mut Phase,
    ) -> Result<Vec<u8>, BlockError> {
        self.rcw.fetch_add(1, Ordering::Relaxed);
        if known.rcw_reads(w) == 0 {
            self.full_stripe_writes.fetch_add(1, Ordering::Relaxed);
        }
        let (mut cols, lost) = self.old_columns(w, known.rest, reads)?;
        if let Some(ld) = lost {
            cols[ld] = self.lost_column(w, &cols, ld, reads)?;
        }
        for p in w.pieces {
            let at = (p.within - w.u0) as usize;
            cols[p.d][at..at + p.n].copy_from_slice(w.new_data(p));
        }
        let mut parity = vec![0u8; w.ulen()];
        for col in &cols {
            xor_into(&mut parity, col);
        }
        Ok(parity)
    }

    /// Every data strip of the row over the hull as it was: from the
    /// stripe cache, or read where the write does not cover it (degraded:
    /// every surviving strip). The lost strip's index, its column left
    /// zero, when a data member has failed.
    fn old_columns(
        &self,
        w: &RowWrite<'_>,
        rest: Vec<Option<Vec<u8>>>,
        reads: &mut Phase,
    ) -> Result<(Vec<Vec<u8>>, Option<usize>), BlockError> {
        let mut cols = vec![vec![0u8; w.ulen()]; self.n() - 1];
        let mut lost = None;
        for (d, (col, known)) in cols.iter_mut().zip(rest).enumerate() {
            let m = self.data_member(w.row, d);
            if self.members.is_failed(m) {
                lost = Some(d);
            } else if let Some(known) = known {
                self.stripe_cache_hits.fetch_add(1, Ordering::Relaxed);
                col.copy_from_slice(&known);
            } else if !w.covers(d) || w.failed.is_some() {
                self.members.read(m, reads, col, w.base + w.u0)?;
            }
        }
        Ok((cols, lost))
    }

    /// Degraded, a data member lost: its strip's old data over the hull,
    /// the parity XOR the other strips.
    fn lost_column(
        &self,
        w: &RowWrite<'_>,
        cols: &[Vec<u8>],
        lost: usize,
        reads: &mut Phase,
    ) -> Result<Vec<u8>, BlockError> {
        self.degraded_writes.fetch_add(1, Ordering::Relaxed);
        let mut old = vec![0u8; w.ulen()];
        self.members.read(w.pm, reads, &mut old, w.base + w.u0)?;
        for (d, col) in cols.iter().enumerate() {
            if d != lost {
                xor_into(&mut old, col);
            }
        }
        Ok(old)
    }

    /// Degraded, the row's parity member lost: no parity to keep, the
    /// data is written alone.
    fn write_data_only(
        &self,
        w: &RowWrite<'_>,
        reads: Phase,
        fua: bool,
    ) -> Result<Phase, BlockError> {
        self.degraded_writes.fetch_add(1, Ordering::Relaxed);
        let mut done = reads.then();
        for p in w.pieces {
            let m = self.data_member(w.row, p.d);
            self.members
                .write(m, &mut done, w.new_data(p), w.base + p.within, fua)?;
        }
        Ok(done)
    }

    /// `known` when the stripe cache had it (a hit), else `len` bytes of
    /// member `m` at `off`, read in `reads`.
    fn known_or_read(
        &self,
        known: Option<Vec<u8>>,
        m: usize,
        reads: &mut Phase,
        len: usize,
        off: u64,
    ) -> Result<Vec<u8>, BlockError> {
        if let Some(k) = known {
            self.stripe_cache_hits.fetch_add(1, Ordering::Relaxed);
            return Ok(k);
        }
        let mut v = vec![0u8; len];
        self.members.read(m, reads, &mut v, off)?;
        Ok(v)
    }

    /// What the stripe cache holds of the row's hull, its written ranges
    /// and its other strips; nothing when degraded (it is not used then).
    fn known(&self, w: &RowWrite<'_>) -> Known {
        let get = |col: usize, a: u64, b: u64| {
            w.failed
                .is_none()
                .then(|| self.stripes.get(w.row, col, a, b))
                .flatten()
        };
        Known {
            parity: get(PARITY, w.u0, w.u1),
            old_data: w
                .pieces
                .iter()
                .map(|p| get(p.d, p.within, p.within + p.n as u64))
                .collect(),
            rest: (0..self.n() - 1)
                .map(|d| {
                    if w.covers(d) {
                        None
                    } else {
                        get(d, w.u0, w.u1)
                    }
                })
                .collect(),
        }
    }

    /// Keep the row's new parity and data in the stripe cache (a healthy
    /// array only: a degraded one does not keep parity whole).
    fn remember(&self, w: &RowWrite<'_>, parity: &[u8]) {
        if w.failed.is_some() {
            return;
        }
        self.stripes.put(w.row, PARITY, w.u0, parity);
        for p in w.pieces {
            self.stripes.put(w.row, p.d, p.within, w.new_data(p));
        }
    }
}
