//! fio's I/O logs (`read_iolog`): the text formats of fio's HOWTO ("Trace
//! file format"), version 2 and version 3 (and blktrace's binary traces,
//! read by [`super::blktrace`]), parsed once into a list of
//! I/Os, and [`Replay`], the generator that hands them out in order with
//! the time each is due.
//!
//! - **v2**: `fio version 2 iolog`, then `FILE add|open|close` and
//!   `FILE read|write|sync|datasync|trim|wait OFFSET LENGTH`; `wait` moves
//!   the log's clock on by OFFSET µs (fio discards waits under 100 µs).
//! - **v3** (what fio ≥ 3.31 writes): every line starts with a timestamp
//!   in µs from the start of the run; `wait` is not allowed. As fio
//!   (`delay_since_ttime`), a line is due the time since the previous
//!   line's timestamp after it — none when that timestamp was 0 or the
//!   clock went backwards.
//!
//! The replay options apply here, as fio applies them while reading:
//! `replay_scale` divides offsets, then `replay_align` rounds them down;
//! `replay_redirect` sends every file's I/O to one file; `replay_skip`
//! leaves kinds out (fio 3.33 honours it for blktrace input only; iolab
//! for both). `open`/`close` lines are accepted and change nothing: iolab
//! opens a job's files for the whole job. A `sync` or `datasync` line is
//! replayed after the I/O before it (the queue drained first, as the
//! worker's `fsync=N`); `trim` lines are replayed as trims
//! (`replay_skip=trim` leaves them out).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::IoUnit;
use crate::job::{IoDir, ReplayOptions};

/// One logged I/O, after the replay options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoggedIo {
    /// When it is due, ns from the start of the replay at 100 % pace
    /// (before `replay_time_scale`).
    pub at_ns: u64,
    pub unit: IoUnit,
    /// A `sync` (false) or `datasync` (true) line of file number `.0`
    /// came next in the log: issued once this I/O is issued.
    pub sync_after: Option<(u32, bool)>,
}

/// A parsed log: its files (in the order added) and its I/Os.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoLog {
    /// 2 or 3 for fio's text logs; 0 for a blktrace binary trace.
    pub version: u32,
    pub files: Vec<PathBuf>,
    pub ios: Vec<LoggedIo>,
}

const V2: &str = "fio version 2 iolog";
const V3: &str = "fio version 3 iolog";

impl IoLog {
    /// Reads and parses the log at `path`; the error is one line.
    pub fn read(path: &Path, opts: &ReplayOptions) -> Result<IoLog, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("cannot read it: {e}"))?;
        if super::blktrace::is_blktrace(&bytes) {
            return super::blktrace::parse(&bytes, opts, super::blktrace::device_path);
        }
        let text = String::from_utf8(bytes).map_err(|_| {
            "neither a text iolog nor a blktrace file (give a fio iolog of version 2 or 3, \
             or a blktrace trace merged with `blkparse -i NAME -d FILE`)"
                .to_string()
        })?;
        IoLog::parse(&text, opts)
    }

    /// Parses the text of a log; errors say which line is wrong and why.
    pub fn parse(text: &str, opts: &ReplayOptions) -> Result<IoLog, String> {
        let mut lines = text.lines();
        let first = lines.next().unwrap_or("").trim_end();
        let version = if first.starts_with(V3) {
            3
        } else if first.starts_with(V2) {
            2
        } else {
            return Err(format!(
                "line 1: expected '{V3}' or '{V2}', got '{}' (fio's version 1 logs \
                 are not read by fio either)",
                clip(first)
            ));
        };
        let mut p = Parser {
            opts,
            version,
            log: IoLog {
                version,
                files: opts.redirect.iter().cloned().collect(),
                ios: Vec::new(),
            },
            names: Vec::new(),
            clock_us: 0,
            prev_us: 0,
        };
        for (i, line) in lines.enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            p.line(line).map_err(|e| format!("line {}: {e}", i + 2))?;
        }
        if p.log.ios.is_empty() {
            return Err("the log has no read or write to replay (after replay_skip)".into());
        }
        Ok(p.log)
    }

    /// The end of the furthest I/O in each file, bytes.
    pub fn extents(&self) -> Vec<u64> {
        let mut ends = vec![0u64; self.files.len()];
        for io in &self.ios {
            let e = &mut ends[io.unit.file as usize];
            *e = (*e).max(io.unit.offset + io.unit.len);
        }
        ends
    }

    /// The largest length logged in `dir`, or 0.
    pub fn max_len(&self, dir: IoDir) -> u64 {
        self.ios
            .iter()
            .filter(|io| io.unit.dir == dir)
            .map(|io| io.unit.len)
            .max()
            .unwrap_or(0)
    }

    /// The smallest length logged in `dir`, or 0.
    pub fn min_len(&self, dir: IoDir) -> u64 {
        self.ios
            .iter()
            .filter(|io| io.unit.dir == dir)
            .map(|io| io.unit.len)
            .min()
            .unwrap_or(0)
    }

    /// How many I/Os go in `dir`.
    pub fn count(&self, dir: IoDir) -> usize {
        self.ios.iter().filter(|io| io.unit.dir == dir).count()
    }
}

fn clip(s: &str) -> &str {
    match s.char_indices().nth(60) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

struct Parser<'a> {
    opts: &'a ReplayOptions,
    version: u32,
    log: IoLog,
    /// The log's own file names, in the order added (index = file number
    /// unless redirected).
    names: Vec<String>,
    clock_us: u64,
    prev_us: u64,
}

impl Parser<'_> {
    fn line(&mut self, line: &str) -> Result<(), String> {
        let mut f = line.split_whitespace();
        if self.version == 3 {
            let t = f.next().unwrap_or("");
            let ts: u64 = t
                .parse()
                .map_err(|_| format!("expected a timestamp in µs first, got '{}'", clip(t)))?;
            // fio's delay_since_ttime: none after a 0 timestamp or a step back.
            if self.prev_us != 0 && ts >= self.prev_us {
                self.clock_us += ts - self.prev_us;
            }
            self.prev_us = ts;
        }
        let fields: Vec<&str> = f.collect();
        let form = if self.version == 3 {
            "'TIMESTAMP FILE add|open|close' or 'TIMESTAMP FILE ACTION OFFSET LENGTH'"
        } else {
            "'FILE add|open|close' or 'FILE ACTION OFFSET LENGTH'"
        };
        match fields.as_slice() {
            [name, act] => self.file_action(name, act),
            [name, act, off, len] => self.io_action(name, act, off, len),
            _ => Err(format!("expected {form}, got '{}'", clip(line))),
        }
    }

    fn file_action(&mut self, name: &str, act: &str) -> Result<(), String> {
        match act {
            "add" => {
                if !self.names.iter().any(|n| n == name) {
                    self.names.push(name.to_string());
                    if self.opts.redirect.is_none() {
                        self.log.files.push(PathBuf::from(name));
                    }
                }
                Ok(())
            }
            "open" | "close" => self.file_no(name).map(|_| ()),
            _ => Err(format!(
                "unknown file action '{}': expected add, open or close",
                clip(act)
            )),
        }
    }

    fn file_no(&self, name: &str) -> Result<u32, String> {
        match self.names.iter().position(|n| n == name) {
            Some(_) if self.opts.redirect.is_some() => Ok(0),
            Some(i) => Ok(i as u32),
            None => Err(format!(
                "file '{}' was not added first (a '{}FILE add' line must name it)",
                clip(name),
                if self.version == 3 { "TIMESTAMP " } else { "" }
            )),
        }
    }

    fn io_action(&mut self, name: &str, act: &str, off: &str, len: &str) -> Result<(), String> {
        let num = |what: &str, s: &str| {
            s.parse::<u64>()
                .map_err(|_| format!("{what} '{}' is not a whole number", clip(s)))
        };
        let dir = match act {
            "read" => IoDir::Read,
            "write" => IoDir::Write,
            "wait" if self.version == 2 => {
                let us = num("wait", off)?;
                if us >= 100 {
                    self.clock_us += us;
                }
                return Ok(());
            }
            "wait" => return Err("'wait' is not allowed in a version 3 log (fio's rule)".into()),
            "sync" | "datasync" => return self.sync(name, act == "datasync"),
            "trim" if self.opts.skip.trim => return Ok(()),
            "trim" => IoDir::Trim,
            _ => {
                return Err(format!(
                    "unknown action '{}': expected read, write, sync, datasync, trim{}",
                    clip(act),
                    if self.version == 2 { " or wait" } else { "" }
                ))
            }
        };
        let file = self.file_no(name)?;
        let (offset, len) = (num("offset", off)?, num("length", len)?);
        if len == 0 {
            return Err("length 0: every replayed I/O moves at least one byte".into());
        }
        if offset.checked_add(len).is_none() {
            return Err(format!("offset {offset} + length {len} overflows"));
        }
        if (dir == IoDir::Read && self.opts.skip.read)
            || (dir == IoDir::Write && self.opts.skip.write)
        {
            return Ok(());
        }
        let mut offset = offset / self.opts.scale.max(1);
        if self.opts.align > 0 {
            offset &= !(self.opts.align - 1);
        }
        self.log.ios.push(LoggedIo {
            sync_after: None,
            at_ns: self.clock_us.saturating_mul(1000),
            unit: IoUnit {
                dir,
                file,
                offset,
                len,
            },
        });
        Ok(())
    }
}

impl Parser<'_> {
    /// A sync line: issued after the I/O logged before it.
    fn sync(&mut self, name: &str, datasync: bool) -> Result<(), String> {
        let file = self.file_no(name)?;
        if self.opts.skip.sync {
            return Ok(());
        }
        match self.log.ios.last_mut() {
            Some(io) => {
                io.sync_after = Some((file, datasync));
                Ok(())
            }
            None => Err(
                "a sync before any read or write: nothing to replay it after; \
                 set replay_skip=sync to leave sync lines out"
                    .into(),
            ),
        }
    }
}

/// The replay of one log by one worker: its I/Os in order, each with the
/// instant it is due (ns after the worker starts; 0 with replay_no_stall).
#[derive(Debug, Clone)]
pub struct Replay {
    log: Arc<IoLog>,
    pos: usize,
    timed: bool,
    time_scale_pct: u64,
    due_ns: u64,
    /// The sync owed after the unit last returned, until taken.
    sync: Option<(u32, bool)>,
}

impl Replay {
    pub fn new(log: Arc<IoLog>, opts: &ReplayOptions) -> Replay {
        Replay {
            log,
            pos: 0,
            timed: !opts.no_stall,
            time_scale_pct: u64::from(opts.time_scale_pct.max(1)),
            due_ns: 0,
            sync: None,
        }
    }

    /// The sync (file number, datasync) the log has after the unit last
    /// returned; `None` once taken.
    #[inline]
    pub fn take_sync(&mut self) -> Option<(u32, bool)> {
        self.sync.take()
    }

    /// Bytes the whole replay moves.
    pub fn total_bytes(&self) -> u64 {
        self.log.ios.iter().map(|io| io.unit.len).sum()
    }

    /// When the unit last returned by [`Replay::next`] is due, ns after the
    /// worker's start; 0 (whenever) with replay_no_stall.
    #[inline]
    pub fn due_ns(&self) -> u64 {
        self.due_ns
    }
}

impl Iterator for Replay {
    type Item = IoUnit;

    #[inline]
    fn next(&mut self) -> Option<IoUnit> {
        let io = self.log.ios.get(self.pos)?;
        self.pos += 1;
        self.sync = io.sync_after;
        if self.timed {
            // replay_time_scale=200 runs at twice the log's pace.
            self.due_ns = (u128::from(io.at_ns) * 100 / u128::from(self.time_scale_pct)) as u64;
        }
        Some(io.unit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> ReplayOptions {
        ReplayOptions::default()
    }

    const V3_LOG: &str = "fio version 3 iolog\n\
        0 /tmp/f add\n\
        0 /tmp/f open\n\
        5 /tmp/f write 0 4096\n\
        105 /tmp/f read 8192 8192\n\
        1105 /tmp/f write 4096 4096\n\
        1200 /tmp/f close\n";

    #[test]
    fn v3_lines_become_units_with_fio_delays() {
        let log = IoLog::parse(V3_LOG, &opts()).unwrap();
        assert_eq!(log.version, 3);
        assert_eq!(log.files, vec![PathBuf::from("/tmp/f")]);
        let got: Vec<(u64, IoDir, u64, u64)> = log
            .ios
            .iter()
            .map(|io| (io.at_ns, io.unit.dir, io.unit.offset, io.unit.len))
            .collect();
        // The first I/O follows a 0 timestamp: no wait (fio's rule).
        assert_eq!(
            got,
            vec![
                (0, IoDir::Write, 0, 4096),
                (100_000, IoDir::Read, 8192, 8192),
                (1_100_000, IoDir::Write, 4096, 4096)
            ]
        );
    }

    #[test]
    fn v2_waits_move_the_clock() {
        let text = "fio version 2 iolog\n/f add\n/f open\n/f read 0 512\n\
                    /f wait 50 0\n/f read 512 512\n/f wait 2000 0\n/f write 0 512\n";
        let log = IoLog::parse(text, &opts()).unwrap();
        let at: Vec<u64> = log.ios.iter().map(|io| io.at_ns).collect();
        assert_eq!(at, vec![0, 0, 2_000_000]);
    }

    #[test]
    fn scale_align_skip_and_redirect_apply() {
        let text = "fio version 3 iolog\n0 /a add\n0 /b add\n1 /a read 1000000 4096\n\
                    2 /b write 8191 512\n3 /b trim 0 4096\n";
        let o = ReplayOptions {
            scale: 10,
            align: 4096,
            redirect: Some("/dev/x".into()),
            skip: crate::job::ReplaySkip::parse("write,trim").unwrap(),
            ..opts()
        };
        let log = IoLog::parse(text, &o).unwrap();
        assert_eq!(log.files, vec![PathBuf::from("/dev/x")]);
        assert_eq!(log.ios.len(), 1);
        // 1000000 / 10 = 100000, rounded down to 4 KiB: 98304.
        assert_eq!(log.ios[0].unit.offset, 98304);
        assert_eq!(log.ios[0].unit.file, 0);
    }

    #[test]
    fn syncs_follow_the_io_before_them() {
        let text = "fio version 3 iolog\n0 /f add\n1 /f write 0 4096\n2 /f sync 4096 0\n\
                    3 /f write 4096 4096\n4 /f datasync 0 0\n5 /f read 0 4096\n";
        let log = IoLog::parse(text, &opts()).unwrap();
        let syncs: Vec<_> = log.ios.iter().map(|io| io.sync_after).collect();
        assert_eq!(syncs, vec![Some((0, false)), Some((0, true)), None]);
        let mut r = Replay::new(Arc::new(log), &opts());
        r.next();
        assert_eq!(r.take_sync(), Some((0, false)));
        assert_eq!(r.take_sync(), None);
        let skip = ReplayOptions {
            skip: crate::job::ReplaySkip::parse("sync").unwrap(),
            ..opts()
        };
        let log = IoLog::parse(text, &skip).unwrap();
        assert!(log.ios.iter().all(|io| io.sync_after.is_none()));
    }

    #[test]
    fn trim_lines_replay_as_trims() {
        let text = "fio version 3 iolog\n0 /f add\n7 /f trim 4096 8192\n9 /f write 0 512\n";
        let log = IoLog::parse(text, &opts()).unwrap();
        assert_eq!(log.count(IoDir::Trim), 1);
        let t = log.ios[0].unit;
        assert_eq!((t.dir, t.offset, t.len), (IoDir::Trim, 4096, 8192));
        let skip = ReplayOptions {
            skip: crate::job::ReplaySkip::parse("trim").unwrap(),
            ..opts()
        };
        assert_eq!(IoLog::parse(text, &skip).unwrap().count(IoDir::Trim), 0);
    }

    #[test]
    fn a_bad_line_is_named() {
        let bad = |text: &str| IoLog::parse(text, &opts()).unwrap_err();
        assert!(bad("rw, 0, 4096\n").starts_with("line 1: expected 'fio version 3 iolog'"));
        let e = bad("fio version 3 iolog\n0 /f add\n7 /f write x 4096\n");
        assert_eq!(e, "line 3: offset 'x' is not a whole number");
        let e = bad("fio version 3 iolog\n0 /f add\n7 /g read 0 1\n");
        assert!(
            e.starts_with("line 3: file '/g' was not added first"),
            "{e}"
        );
        let e = bad("fio version 3 iolog\n0 /f add\n7 /f sync 0 0\n8 /f write 0 1\n");
        assert!(
            e.starts_with("line 3: a sync before any read or write"),
            "{e}"
        );
        let e = bad("fio version 3 iolog\n0 /f add\n7 /f wait 10 0\n");
        assert!(e.starts_with("line 3: 'wait' is not allowed"), "{e}");
        let e = bad("fio version 2 iolog\n/f add\n/f open extra words here\n");
        assert!(
            e.starts_with("line 3: expected 'FILE add|open|close'"),
            "{e}"
        );
        assert!(bad("fio version 3 iolog\n0 /f add\n").contains("no read or write"));
    }

    #[test]
    fn the_replay_paces_by_time_scale_or_not_at_all() {
        let log = || Arc::new(IoLog::parse(V3_LOG, &opts()).unwrap());
        let dues = |o: ReplayOptions| {
            let mut r = Replay::new(log(), &o);
            let mut v = Vec::new();
            while r.next().is_some() {
                v.push(r.due_ns());
            }
            v
        };
        assert_eq!(dues(opts()), vec![0, 100_000, 1_100_000]);
        let fast = ReplayOptions {
            time_scale_pct: 200,
            ..opts()
        };
        assert_eq!(dues(fast), vec![0, 50_000, 550_000]);
        let no_stall = ReplayOptions {
            no_stall: true,
            ..opts()
        };
        assert_eq!(dues(no_stall), vec![0, 0, 0]);
        assert_eq!(Replay::new(log(), &opts()).total_bytes(), 16384);
    }
}
