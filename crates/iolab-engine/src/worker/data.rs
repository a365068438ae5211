//! A worker's data: what its writes carry ([`Content`] or verified chunks)
//! and the verify log — fio's verify flow. A job that writes logs every
//! write when it is issued, marked in flight until it completes (as fio
//! does: a later write over the same bytes replaces the entry at once, and
//! an entry in flight is not read back until it completes, so a verify
//! read never races the write it checks). The logged blocks are read back
//! and checked after the write phase, or every `verify_backlog` writes.
//! Reads of a read/write mix are not checked (fio checks only the blocks
//! it logged, or every read of a job that only reads); a read job (or
//! `verify_only`) checks what it reads against the headers alone.
//! With `verify_write_sequence=0` a logged block need only be intact, not
//! the last write's data. Mismatches are counted; the first is kept for
//! the error, and with `verify_fatal` the first one ends the job.
//!
//! fio's verify-trim (`trim_percentage` with `trim_backlog`): each logged
//! write is chosen for a trim with that probability; every `trim_backlog`
//! logged writes, a batch of the chosen blocks (`trim_backlog_batch`, by
//! default `trim_backlog` of them) is trimmed once its write completed. A
//! trimmed block stays in the log and must read back as zeroes
//! (`trim_verify_zero`, fio's default), or leaves it.

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};

use iolab_core::gen::IoUnit;
use iolab_core::job::{IoDir, PreparedJob, VerifyKind};

use super::content::Content;
use super::dedupe::Dedupe;
use super::io_loop::Slot;
use super::verify::{Layout, Mismatch};
use super::Worker;
use crate::backend::Backend;
use crate::EngineError;

/// Logged writes by (file, offset): (length, seed, in flight). A later
/// write over the same bytes replaces what it covers (fio keeps its log
/// the same way), so overwritten data is never expected back.
type Log = BTreeMap<(u32, u64), (u64, u64, bool)>;

/// The seed of a logged block that was trimmed: it must read back as
/// zeroes. Write seeds are odd and 0 means "any intact chunk", so 2 is
/// never a write's.
const TRIMMED: u64 = 2;

/// fio's verify-trim state (see the module doc).
#[derive(Debug, Default)]
struct VerifyTrims {
    pct: u32,
    backlog: u64,
    batch: u64,
    zero: bool,
    /// Logged blocks chosen for a trim, in write order: (file, offset, len).
    chosen: VecDeque<(u32, u64, u64)>,
    writes_since: u64,
    batch_left: u64,
    draw: u64,
}

impl VerifyTrims {
    fn new(d: &iolab_core::job::DataOptions, seed: u64) -> VerifyTrims {
        if !d.verify_trims() {
            return VerifyTrims::default();
        }
        VerifyTrims {
            pct: d.trim_pct,
            backlog: d.trim_backlog,
            batch: if d.trim_backlog_batch == 0 {
                d.trim_backlog
            } else {
                d.trim_backlog_batch
            },
            zero: d.trim_verify_zero,
            draw: seed | 1,
            ..VerifyTrims::default()
        }
    }

    /// A logged write: chosen for a trim with probability `pct` %.
    fn logged(&mut self, file: u32, offset: u64, len: u64) {
        self.writes_since += 1;
        // xorshift64*: a stream of its own, so the written data stays as it
        // would be without verify-trim.
        self.draw ^= self.draw >> 12;
        self.draw ^= self.draw << 25;
        self.draw ^= self.draw >> 27;
        let r = self.draw.wrapping_mul(0x2545_f491_4f6c_dd1d) % 100;
        if r < u64::from(self.pct) {
            self.chosen.push_back((file, offset, len));
        }
    }
}

#[derive(Debug)]
pub struct DataState {
    content: Content,
    verify: Option<Layout>,
    /// Log writes for a verify phase (write jobs with do_verify).
    log_writes: bool,
    /// Turn written units into verify reads (verify_only).
    only: bool,
    /// Reads the generator makes are checked against headers (a job that
    /// only reads, or verify_only); a mix's reads are not.
    plain_reads_checked: bool,
    /// verify_write_sequence: a logged block must hold the last write's seed.
    write_sequence: bool,
    fatal: bool,
    dump: bool,
    backlog: u64,
    log: Log,
    /// Per read handed out, in issue order (when writes are logged): the
    /// seed a logged block must hold (0: any intact one), or `None` for a
    /// read of the mix, which is not checked.
    expected: VecDeque<Option<u64>>,
    /// Reads left to hand out before writing resumes (verify_backlog).
    draining: u64,
    /// The verify phase after the writes (only logged reads are issued).
    pub phase: bool,
    pub failures: u64,
    pub verified: u64,
    first: Option<(Mismatch, PathBuf)>,
    trims: VerifyTrims,
}

impl DataState {
    /// `region_bytes`: bytes of one pass (the dedupe working set is a share
    /// of it); `dedupe_peer`: the worker's place among dedupe_global ones.
    pub fn new(
        job: &PreparedJob,
        seed: u64,
        region_bytes: u64,
        dedupe_peer: super::dedupe::DedupePeer,
    ) -> DataState {
        let d = &job.data;
        let mut content = Content::new(d, seed ^ 0x5eed);
        content.set_dedupe(Dedupe::new(job, seed ^ 0x5eed, region_bytes, dedupe_peer));
        let verify = (d.verify != VerifyKind::Off).then(|| Layout {
            kind: d.verify,
            interval: d.verify_interval.max(1) as usize,
            header_at: d.verify_offset as usize,
            pattern: d.verify_pattern.clone(),
        });
        let writes = job.writes() && !d.verify_only;
        DataState {
            content,
            log_writes: verify.is_some() && writes && d.do_verify,
            verify,
            only: d.verify_only,
            plain_reads_checked: !job.writes() || d.verify_only,
            write_sequence: d.verify_write_sequence,
            fatal: d.verify_fatal,
            dump: d.verify_dump,
            backlog: d.verify_backlog,
            log: Log::new(),
            expected: VecDeque::new(),
            draining: 0,
            phase: false,
            failures: 0,
            verified: 0,
            first: None,
            trims: VerifyTrims::new(d, seed ^ 0x7a1d),
        }
    }

    /// Fill the buffers at start, where the options change them from the
    /// random bytes they were allocated with.
    pub fn initial_fill(&mut self, buf: &mut [u8]) {
        if self.content.changes_initial() {
            self.content.initial(buf);
        }
    }

    /// A verify read to issue now instead of the generator's next unit.
    /// (The common answer, none, without a call: this is on every I/O's path.)
    #[inline(always)]
    pub fn next_read(&mut self) -> Option<IoUnit> {
        let due = self.backlog > 0 && self.log.len() as u64 >= self.backlog;
        if !self.phase && self.draining == 0 && !due {
            return None;
        }
        self.next_logged_read()
    }

    #[inline(never)]
    fn next_logged_read(&mut self) -> Option<IoUnit> {
        if !self.phase {
            if self.draining == 0 && self.backlog > 0 && self.log.len() as u64 >= self.backlog {
                self.draining = self.backlog;
            }
            if self.draining == 0 {
                return None;
            }
            self.draining -= 1;
        }
        // fio's get_next_verify: a block whose write is in flight waits.
        let (&(file, offset), &(len, seed, _)) = self.log.iter().find(|(_, v)| !v.2)?;
        self.log.remove(&(file, offset));
        let expect = if self.write_sequence || seed == TRIMMED {
            seed
        } else {
            0
        };
        self.expected.push_back(Some(expect));
        Some(IoUnit {
            dir: IoDir::Read,
            file,
            offset,
            len,
        })
    }

    /// A verify-trim to issue now (see the module doc): the next chosen
    /// block whose write completed, at a `trim_backlog` point or within its
    /// batch. A chosen block written over since is skipped; one whose write
    /// is still in flight waits.
    #[inline(always)]
    pub fn next_trim(&mut self) -> Option<IoUnit> {
        if self.trims.backlog == 0 || self.phase {
            return None;
        }
        self.next_chosen_trim()
    }

    #[inline(never)]
    fn next_chosen_trim(&mut self) -> Option<IoUnit> {
        let t = &mut self.trims;
        if t.backlog == 0 || self.phase {
            return None;
        }
        if t.batch_left == 0 {
            if t.writes_since < t.backlog || t.chosen.is_empty() {
                return None;
            }
            (t.writes_since, t.batch_left) = (0, t.batch);
        }
        while let Some(&(file, offset, len)) = t.chosen.front() {
            match self.log.get_mut(&(file, offset)) {
                Some(e) if e.0 == len && e.1 != TRIMMED && !e.2 => {
                    t.chosen.pop_front();
                    t.batch_left -= 1;
                    e.2 = true; // no verify read until the trim completed
                    return Some(IoUnit {
                        dir: IoDir::Trim,
                        file,
                        offset,
                        len,
                    });
                }
                Some(e) if e.0 == len && e.2 => return None,
                _ => {
                    t.chosen.pop_front();
                }
            }
        }
        t.batch_left = 0;
        None
    }

    /// A verify-trim completed: the block must now read back as zeroes
    /// (trim_verify_zero), or leaves the log.
    pub fn trimmed(&mut self, unit: IoUnit) {
        let key = (unit.file, unit.offset);
        if !matches!(self.log.get(&key), Some(e) if e.0 == unit.len) {
            return;
        }
        if self.trims.zero {
            self.log.insert(key, (unit.len, TRIMMED, false));
        } else {
            self.log.remove(&key);
        }
    }

    /// The generator's unit as this job issues it (verify_only reads what
    /// it would have written); a read of a mix is marked unchecked.
    #[inline]
    pub fn adapt(&mut self, mut u: IoUnit) -> IoUnit {
        if self.only {
            u.dir = IoDir::Read;
        }
        if u.dir == IoDir::Read && self.log_writes {
            self.expected.push_back(None);
        }
        u
    }

    /// True when the job verifies data (a completed read may be checked in
    /// its slot's buffer, so the slot must not be reissued before that).
    pub fn verifies(&self) -> bool {
        self.verify.is_some()
    }

    /// True when a verify phase has blocks to read.
    pub fn verify_pending(&self) -> bool {
        !self.log.is_empty()
    }

    /// Prepare a write's buffer; returns the seed to remember in its slot.
    #[inline]
    pub fn before_write(&mut self, buf: &mut [u8], offset: u64) -> u64 {
        let Some(l) = &self.verify else {
            self.content.before_write(buf, offset);
            return 0;
        };
        let seed = self.content.next_u64() | 1;
        for (i, c) in buf.chunks_mut(l.interval).enumerate() {
            let i = i as u64;
            l.build(c, offset + i * l.interval as u64, seed.wrapping_add(i));
        }
        seed
    }

    /// A read is issued: the seed it must find (0 = any intact chunk), or
    /// `None` when it is not checked.
    #[inline]
    pub fn read_seed(&mut self) -> Option<u64> {
        self.verify.as_ref()?;
        if self.log_writes {
            return self.expected.pop_front().flatten();
        }
        self.plain_reads_checked.then_some(0)
    }

    /// A write completed: its log entry (unless a later write replaced it)
    /// may now be read back.
    #[inline]
    pub fn written(&mut self, unit: IoUnit, seed: u64) {
        if !self.log_writes {
            return;
        }
        if let Some(e) = self.log.get_mut(&(unit.file, unit.offset)) {
            if e.0 == unit.len && e.1 == seed {
                e.2 = false;
            }
        }
    }

    /// A write is issued: log it, in flight, for the verify phase.
    #[inline]
    pub fn issued_write(&mut self, unit: IoUnit, seed: u64) {
        if !self.log_writes {
            return;
        }
        let (file, start, end) = (unit.file, unit.offset, unit.offset + unit.len);
        let before = self.log.range(..(file, start)).next_back();
        if let Some((&k, &(len, _, _))) = before {
            if k.0 == file && k.1 + len > start {
                self.log.remove(&k);
            }
        }
        let covered: Vec<(u32, u64)> = self
            .log
            .range((file, start)..(file, end))
            .map(|(k, _)| *k)
            .collect();
        for k in covered {
            self.log.remove(&k);
        }
        self.log.insert((file, start), (unit.len, seed, true));
        if self.trims.backlog > 0 {
            self.trims.logged(file, start, unit.len);
        }
    }

    /// A verify read completed: check its chunks. Err only when the job
    /// must end now (verify_fatal).
    pub fn check(
        &mut self,
        buf: &mut [u8],
        offset: u64,
        seed: u64,
        path: &Path,
    ) -> Result<(), EngineError> {
        let Some(l) = self.verify.take() else {
            return Ok(());
        };
        let mut bad = None;
        if seed == TRIMMED {
            bad = zero_mismatch(buf, offset);
            return self.checked(l, bad, path);
        }
        for (i, c) in buf.chunks_mut(l.interval).enumerate() {
            let i = i as u64;
            let s = if seed == 0 { 0 } else { seed.wrapping_add(i) };
            let as_read = self.dump.then(|| c.to_vec());
            if let Err(m) = l.check(c, offset + i * l.interval as u64, s) {
                if let Some(found) = as_read {
                    dump(path, &m, &found);
                }
                bad.get_or_insert(m);
            }
        }
        self.checked(l, bad, path)
    }

    /// Count a checked read, and its mismatch if any.
    fn checked(
        &mut self,
        l: Layout,
        bad: Option<Mismatch>,
        path: &Path,
    ) -> Result<(), EngineError> {
        self.verify = Some(l);
        self.verified += 1;
        let Some(m) = bad else { return Ok(()) };
        self.failures += 1;
        self.first.get_or_insert((m, path.to_path_buf()));
        match self.fatal {
            true => Err(self.error().expect("a failure was just counted")),
            false => Ok(()),
        }
    }

    /// continue_on_error=verify: a mismatch never ends the job at once
    /// (it is counted, see `errors`), whatever verify_fatal says.
    pub fn continue_on_mismatch(&mut self) {
        self.fatal = false;
    }

    /// The job's verify error, if any block failed.
    pub fn error(&self) -> Option<EngineError> {
        let (m, path) = self.first.clone()?;
        Some(EngineError::Verify {
            path,
            offset: m.offset,
            len: m.len as u64,
            what: m.what,
            expected: m.expected,
            found: m.found,
            failures: self.failures,
            verified: self.verified,
        })
    }
}

/// A trimmed block read back: a mismatch unless every byte is zero.
fn zero_mismatch(buf: &[u8], offset: u64) -> Option<Mismatch> {
    let first = buf.iter().position(|&b| b != 0)?;
    Some(Mismatch {
        offset,
        len: buf.len(),
        what: "trimmed block is not zero (trim_verify_zero)",
        expected: "zeroes".into(),
        found: format!(
            "{} non-zero bytes, the first at +{first}",
            buf.iter().filter(|&&b| b != 0).count()
        ),
        expected_chunk: None,
    })
}

/// verify_dump: the chunk as read and as expected, next to the file.
fn dump(path: &Path, m: &Mismatch, found: &[u8]) {
    let base = format!("{}.{}", path.display(), m.offset);
    // Best effort: a failed dump must not hide the mismatch itself.
    let _ = std::fs::write(format!("{base}.received"), found);
    if let Some(e) = &m.expected_chunk {
        let _ = std::fs::write(format!("{base}.expected"), e);
    }
}

/// The I/O a slot holds.
fn slot_unit(s: &Slot) -> IoUnit {
    IoUnit {
        dir: s.dir,
        file: s.file,
        offset: s.offset,
        len: u64::from(s.len),
    }
}

/// The worker's side of its data: the hooks the I/O loop calls.
impl<B: Backend> Worker<B> {
    /// Fill a write's buffer as the data options say, or mark a read to be
    /// checked; the slot is free (nothing in flight uses its buffer).
    #[inline]
    pub(super) fn prepare_data(&mut self, slot: u32) {
        let s = &mut self.q.slots[slot as usize];
        if s.dir == IoDir::Write {
            // Safety: the slot is being issued, so no I/O uses its buffer;
            // len ≤ the largest block size = the slot size.
            let buf = unsafe { self.bufs.slot_mut(slot, s.len as usize) };
            s.seed = self.data.before_write(buf, s.offset);
            self.data.issued_write(slot_unit(s), s.seed);
        } else if s.dir == IoDir::Trim {
            // No data: verify is refused for jobs that trim.
        } else if let Some(seed) = self.data.read_seed() {
            (s.check, s.seed) = (true, seed);
        }
    }

    /// A whole I/O completed: log a write, check a verify read.
    #[inline(always)]
    pub(super) fn data_done(&mut self, slot: u32, s: &Slot) {
        if s.dir == IoDir::Write {
            self.data.written(slot_unit(s), s.seed);
        } else if s.dir == IoDir::Trim {
            self.data.trimmed(slot_unit(s));
        } else if s.check {
            // Safety: the read completed, so the kernel is done with the buffer.
            let buf = unsafe { self.bufs.slot_mut(slot, s.len as usize) };
            let path = &self.paths[s.file as usize];
            if let Err(e) = self.data.check(buf, s.offset, s.seed, path) {
                self.error.get_or_insert(e);
            }
        }
    }
}

#[cfg(test)]
#[path = "data_tests.rs"]
mod tests;
