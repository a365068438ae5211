//! raid0: striping, and the striping engine raid1 and raid10 are made of.
//!
//! Parameters: `members` (at least 2), `member`, `strip` (default 64k),
//! `failed` — see raid.rs. No redundancy: a failed member fails every
//! request that touches it.
//!
//! Layout: logical strip `k` lives on column `k mod C`, row `k div C`, at
//! column offset `row x strip`. A column is one member (raid0), a mirror
//! pair (raid10, `copies = 2`) or every member (raid1, one column). A
//! request is cut at strip boundaries and the pieces of one column that
//! follow each other on it are joined into one member I/O, so a 1 MiB
//! read over 6 members with 64 KiB strips is 6 member reads of 192 or
//! 128 KiB, all in one phase: the request ends with the slowest.
//!
//! Size: `C x member size` (each member cut to whole strips).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::{live, not_supported, totals, Members, Phase, RaidCounters, Traffic};
use crate::proto::Errno;
use crate::stack::{fmt_bytes, BlockDev, BlockError, BlockResult, Caps, Counter, IoCtx, ZeroReq};

/// A striped (and optionally mirrored) array.
#[derive(Debug)]
pub struct Striped {
    level: &'static str,
    pub members: Members,
    strip: u64,
    /// Members per column (1: raid0; 2: raid10; all: raid1).
    copies: usize,
    columns: usize,
    rr: AtomicU64,
    traffic: Traffic,
}

/// Consecutive pieces of one column: where they start on the column and
/// their (start, length) in the request's buffer.
#[derive(Debug)]
struct Run {
    column: usize,
    column_offset: u64,
    len: usize,
    pieces: Vec<(usize, usize)>,
}

impl Striped {
    /// raid0 over `devs`.
    pub fn raid0(devs: Vec<Arc<dyn BlockDev>>, strip: u64) -> Result<Striped, String> {
        Striped::new("raid0", devs, Some(strip), 1, 2)
    }

    pub(super) fn new(
        level: &'static str,
        devs: Vec<Arc<dyn BlockDev>>,
        strip: Option<u64>,
        copies: usize,
        min: usize,
    ) -> Result<Striped, String> {
        let members = Members::new(devs, level, min, strip)?;
        // One column (a mirror): the whole member is one strip.
        let strip = strip.unwrap_or(1 << 62);
        if copies == 0 || !members.len().is_multiple_of(copies) {
            return Err(format!(
                "{level} needs a multiple of {copies} members, got {}",
                members.len()
            ));
        }
        let columns = members.len() / copies;
        Ok(Striped {
            level,
            members,
            strip,
            copies,
            columns,
            rr: AtomicU64::new(0),
            traffic: Traffic::default(),
        })
    }

    fn size_bytes(&self) -> u64 {
        self.members.member_bytes * self.columns as u64
    }

    /// The runs of `len` bytes at `offset`, in column order.
    fn runs(&self, offset: u64, len: usize) -> Vec<Run> {
        let mut runs: Vec<Run> = Vec::new();
        let (mut pos, end) = (offset, offset + len as u64);
        while pos < end {
            let k = pos / self.strip;
            let within = pos % self.strip;
            let n = (self.strip - within).min(end - pos) as usize;
            let column = (k % self.columns as u64) as usize;
            let column_offset = (k / self.columns as u64) * self.strip + within;
            let at = (pos - offset) as usize;
            match runs
                .iter_mut()
                .find(|r| r.column == column && r.column_offset + r.len as u64 == column_offset)
            {
                Some(r) => {
                    r.len += n;
                    r.pieces.push((at, n));
                }
                None => runs.push(Run {
                    column,
                    column_offset,
                    len: n,
                    pieces: vec![(at, n)],
                }),
            }
            pos += n as u64;
        }
        runs.sort_by_key(|r| (r.column, r.column_offset));
        runs
    }

    fn mirrors(&self, column: usize) -> std::ops::Range<usize> {
        column * self.copies..(column + 1) * self.copies
    }

    /// The mirror to read `column_offset` from: one whose last I/O ended
    /// there (a sequential stream stays on one disk, as md's read balance
    /// does), else the next working one in turn.
    fn pick(&self, column: usize, column_offset: u64) -> Result<usize, BlockError> {
        let working: Vec<usize> = self
            .mirrors(column)
            .filter(|&i| !self.members.is_failed(i))
            .collect();
        if working.is_empty() {
            return Err(BlockError::new(
                Errno::Io,
                format!("{}: every member of column {column} has failed", self.level),
            ));
        }
        let streaming = working
            .iter()
            .copied()
            .find(|&i| self.members.get(i).next_offset.load(Ordering::Relaxed) == column_offset);
        Ok(streaming.unwrap_or_else(|| {
            let turn = self.rr.fetch_add(1, Ordering::Relaxed) as usize;
            working[turn % working.len()]
        }))
    }
}

impl Striped {
    /// Fail member `i` or restore it, while serving (live.rs).
    fn live(&self, i: usize, failed: bool) -> Result<String, String> {
        let _alone = self.members.exclusive();
        let level = self.level;
        if !live::check(&self.members, level, i, failed)? {
            let state = if failed { "failed" } else { "working" };
            return Ok(format!("{level}: member {i} is {state} already"));
        }
        let mut others = self
            .mirrors(i / self.copies)
            .filter(|&j| j != i && !self.members.is_failed(j));
        let Some(src) = others.next() else {
            return Err(format!(
                "{level}: member {i} holds the only working copy of its data; \
                 failing or restoring it from nothing would lose data"
            ));
        };
        if !failed {
            let m = &self.members;
            return live::restore(m, level, i, |buf, off| live::read_member(m, src, buf, off));
        }
        self.members.fail_live(i);
        Ok(format!(
            "{level}: member {i} failed (member {src} serves its copy)"
        ))
    }
}

impl RaidCounters for Striped {
    fn counter_values(&self) -> Vec<(String, u64)> {
        let mut v = self.traffic.counters();
        v.extend(self.members.counters());
        v
    }
}

impl BlockDev for Striped {
    fn caps(&self) -> Caps {
        let strip = if self.columns > 1 { self.strip } else { 4096 };
        self.members.caps(self.size_bytes(), strip)
    }

    fn describe(&self) -> String {
        let strip = if self.columns > 1 {
            format!(",strip={}", fmt_bytes(self.strip))
        } else {
            String::new()
        };
        format!(
            "{}({}{strip}) <- {}",
            self.level,
            fmt_bytes(self.size_bytes()),
            self.members.describe()
        )
    }

    fn read_at(&self, ctx: &mut IoCtx, buf: &mut [u8], offset: u64) -> BlockResult {
        let _in = self.members.enter();
        self.traffic.read(buf.len());
        let mut phase = Phase::after(ctx);
        for run in self.runs(offset, buf.len()) {
            let m = self.pick(run.column, run.column_offset)?;
            if let [(at, n)] = run.pieces[..] {
                self.members
                    .read(m, &mut phase, &mut buf[at..at + n], run.column_offset)?;
                continue;
            }
            let mut tmp = vec![0u8; run.len];
            self.members
                .read(m, &mut phase, &mut tmp, run.column_offset)?;
            let mut from = 0;
            for (at, n) in run.pieces {
                buf[at..at + n].copy_from_slice(&tmp[from..from + n]);
                from += n;
            }
        }
        phase.finish(ctx);
        Ok(())
    }

    fn write_at(&self, ctx: &mut IoCtx, buf: &[u8], offset: u64, fua: bool) -> BlockResult {
        let _in = self.members.enter();
        self.traffic.write(buf.len());
        let mut phase = Phase::after(ctx);
        for run in self.runs(offset, buf.len()) {
            let gathered;
            let data: &[u8] = if let [(at, n)] = run.pieces[..] {
                &buf[at..at + n]
            } else {
                gathered = run
                    .pieces
                    .iter()
                    .flat_map(|&(at, n)| buf[at..at + n].iter().copied())
                    .collect::<Vec<u8>>();
                &gathered
            };
            let mut written = 0;
            for m in self.mirrors(run.column) {
                if !self.members.is_failed(m) {
                    self.members
                        .write(m, &mut phase, data, run.column_offset, fua)?;
                    written += 1;
                } else {
                    // A restore copies it over (live.rs).
                    self.members
                        .note_missed(m, run.column_offset, data.len() as u64);
                }
            }
            if written == 0 {
                return Err(BlockError::new(
                    Errno::Io,
                    format!(
                        "{}: every member of column {} has failed",
                        self.level, run.column
                    ),
                ));
            }
        }
        phase.finish(ctx);
        Ok(())
    }

    fn flush(&self, ctx: &mut IoCtx) -> BlockResult {
        let _in = self.members.enter();
        self.members.flush(ctx)
    }

    fn set_member_failed(&self, i: usize, failed: bool) -> Option<Result<String, String>> {
        Some(self.live(i, failed))
    }

    fn counters(&self) -> Vec<Counter> {
        totals(self.counter_values())
    }

    fn children(&self) -> Vec<Arc<dyn BlockDev>> {
        self.members.devs()
    }

    fn full_stripe_bytes(&self) -> Option<u64> {
        (self.columns > 1).then_some(self.strip * self.columns as u64)
    }

    fn trim(&self, _ctx: &mut IoCtx, _offset: u64, _len: u64, _fua: bool) -> BlockResult {
        Err(not_supported(self.level, "trim"))
    }

    fn zero(&self, _: &mut IoCtx, _: ZeroReq) -> BlockResult {
        Err(not_supported(self.level, "write zeroes"))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::stack::memory::MemoryDev;

    pub(crate) fn mem(n: usize, size: u64) -> Vec<Arc<dyn BlockDev>> {
        (0..n)
            .map(|_| Arc::new(MemoryDev::new(size).unwrap()) as Arc<dyn BlockDev>)
            .collect()
    }

    pub(crate) fn count(r: &dyn RaidCounters, name: &str) -> u64 {
        r.counter_values()
            .into_iter()
            .find(|(n, _)| n == name)
            .unwrap()
            .1
    }

    #[test]
    fn a_full_row_is_one_io_per_member_and_data_round_trips() {
        let r = Striped::raid0(mem(4, 1 << 20), 64 << 10).unwrap();
        assert_eq!(r.caps().size_bytes, 4 << 20);
        let data: Vec<u8> = (0..512 << 10).map(|i| (i * 7 % 251) as u8).collect();
        r.write_at(&mut IoCtx::new(), &data, 32 << 10, false)
            .unwrap();
        // 512 KiB from 32 KiB: 9 strip pieces; member 0 gets pieces of
        // rows 0 and 1 that are contiguous on it, and so on.
        for i in 0..4 {
            let w = count(&r, &format!("member{i}.writes"));
            assert!(w == 1 || w == 2, "member {i}: {w}");
        }
        let mut back = vec![0u8; data.len()];
        r.read_at(&mut IoCtx::new(), &mut back, 32 << 10).unwrap();
        assert!(back == data);
        // The first strip's second half sits on member 0 at offset 32 KiB.
        let mut m0 = vec![0u8; 32 << 10];
        let dev = &r.members.get(0).dev;
        dev.read_at(&mut IoCtx::new(), &mut m0, 32 << 10).unwrap();
        assert!(m0[..] == data[..32 << 10]);
    }

    #[test]
    fn a_failed_member_fails_what_touches_it() {
        let r = Striped::raid0(mem(2, 1 << 20), 4096).unwrap();
        r.members.fail(1);
        let mut b = vec![0u8; 4096];
        r.read_at(&mut IoCtx::new(), &mut b, 0).unwrap();
        let e = r.read_at(&mut IoCtx::new(), &mut b, 4096).unwrap_err();
        assert_eq!(e.errno, Errno::Io);
    }

    #[test]
    fn bad_geometry_is_refused() {
        let e = Striped::raid0(mem(2, 1 << 20), 3000).unwrap_err();
        assert!(e.contains("not a power of two"), "{e}");
        let e = Striped::raid0(mem(2, 1 << 20), 256).unwrap_err();
        assert!(e.contains("sector of 512"), "{e}");
        let e = Striped::raid0(mem(1, 1 << 20), 4096).unwrap_err();
        assert!(e.contains("at least 2 members"), "{e}");
    }
}
