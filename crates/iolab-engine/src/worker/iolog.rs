//! Per-I/O records for fio's logs with `log_avg_msec=0` (one line per I/O).
//!
//! While it runs, a worker appends one fixed-size binary record per I/O
//! completed in the measured window to its own file (`JOB.WORKER.iolog` in
//! the job's `per_io_log` directory) through a buffer: no lock, no
//! allocation, bounded memory. After the run, [`write_fio_log`] turns the
//! records of one or more workers (merged in time order) into one of fio's
//! log files, in the format of fio's HOWTO ("Log File Formats"):
//! `time (ms), value, direction, block size[, offset], priority`.
//!
//! [`FioIoLog`] is the same mechanism for fio's `write_iolog`: each
//! worker appends a text line per *issued* I/O (fio's iolog version 3:
//! `µs FILE read|write OFFSET LENGTH`) through its own buffer, and the
//! file actions (`add`, `open`, `close`) around them.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// Bytes of one record: completion time, slat, clat (ns, u64 each),
/// offset (u64), length (u32), ioprio (u16), direction (u8), padding.
pub const RECORD_BYTES: usize = 40;

/// One completed I/O as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IoRecord {
    /// Completion time, ns from the start of the measured window.
    pub time_ns: u64,
    pub slat_ns: u64,
    pub clat_ns: u64,
    pub offset: u64,
    pub len: u32,
    pub ioprio: u16,
    pub dir: u8,
}

impl IoRecord {
    fn encode(&self) -> [u8; RECORD_BYTES] {
        let mut b = [0u8; RECORD_BYTES];
        b[0..8].copy_from_slice(&self.time_ns.to_le_bytes());
        b[8..16].copy_from_slice(&self.slat_ns.to_le_bytes());
        b[16..24].copy_from_slice(&self.clat_ns.to_le_bytes());
        b[24..32].copy_from_slice(&self.offset.to_le_bytes());
        b[32..36].copy_from_slice(&self.len.to_le_bytes());
        b[36..38].copy_from_slice(&self.ioprio.to_le_bytes());
        b[38] = self.dir;
        b
    }

    fn decode(b: &[u8; RECORD_BYTES]) -> IoRecord {
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        IoRecord {
            time_ns: u64_at(0),
            slat_ns: u64_at(8),
            clat_ns: u64_at(16),
            offset: u64_at(24),
            len: u32::from_le_bytes(b[32..36].try_into().expect("4 bytes")),
            ioprio: u16::from_le_bytes([b[36], b[37]]),
            dir: b[38],
        }
    }
}

/// The file of worker `worker` of job `job` in `dir`.
pub fn record_path(dir: &Path, job: u32, worker: u32) -> PathBuf {
    dir.join(format!("{job}.{worker}.iolog"))
}

/// One worker's record stream.
#[derive(Debug)]
pub struct IoLogWriter {
    out: BufWriter<File>,
    path: PathBuf,
    /// The first write error (kept, reported at the end, never per I/O).
    error: Option<std::io::Error>,
}

impl IoLogWriter {
    pub fn create(dir: &Path, job: u32, worker: u32) -> Result<IoLogWriter, crate::EngineError> {
        let path = record_path(dir, job, worker);
        let file = File::create(&path).map_err(|e| crate::EngineError::Backend {
            engine: "per_io_log",
            reason: format!("cannot create {}: {e}", path.display()),
        })?;
        Ok(IoLogWriter {
            out: BufWriter::with_capacity(1 << 16, file),
            path,
            error: None,
        })
    }

    #[inline]
    pub fn record(&mut self, r: &IoRecord) {
        if self.error.is_none() {
            if let Err(e) = self.out.write_all(&r.encode()) {
                self.error = Some(e);
            }
        }
    }

    /// Flush; the first error of the whole stream, naming the file.
    pub fn finish(&mut self) -> Result<(), crate::EngineError> {
        let r = match self.error.take() {
            Some(e) => Err(e),
            None => self.out.flush(),
        };
        r.map_err(|e| crate::EngineError::Backend {
            engine: "per_io_log",
            reason: format!("writing {}: {e}", self.path.display()),
        })
    }
}

/// One worker's `write_iolog` stream (fio's iolog version 3, appended to
/// the file as fio does).
#[derive(Debug)]
pub struct FioIoLog {
    out: BufWriter<File>,
    path: PathBuf,
    names: Vec<String>,
    origin_ns: u64,
    error: Option<std::io::Error>,
}

impl FioIoLog {
    /// Opens `path` to append and writes the version line and an `add`
    /// line for each of `files` (the worker's files, by file number).
    pub fn create(path: &Path, files: &[PathBuf]) -> Result<FioIoLog, crate::EngineError> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| crate::EngineError::Backend {
                engine: "write_iolog",
                reason: format!("cannot open {}: {e}", path.display()),
            })?;
        let mut log = FioIoLog {
            out: BufWriter::with_capacity(1 << 16, file),
            path: path.to_path_buf(),
            names: files.iter().map(|p| p.display().to_string()).collect(),
            origin_ns: 0,
            error: None,
        };
        log.put(format_args!("fio version 3 iolog\n"));
        log.files(0, "add");
        Ok(log)
    }

    fn put(&mut self, args: std::fmt::Arguments<'_>) {
        if self.error.is_none() {
            if let Err(e) = self.out.write_fmt(args) {
                self.error = Some(e);
            }
        }
    }

    fn files(&mut self, us: u64, act: &str) {
        for i in 0..self.names.len() {
            let name = std::mem::take(&mut self.names[i]);
            self.put(format_args!("{us} {name} {act}\n"));
            self.names[i] = name;
        }
    }

    fn us(&self, now_ns: u64) -> u64 {
        now_ns.saturating_sub(self.origin_ns) / 1000
    }

    /// The worker starts issuing at `origin_ns`: timestamps count from
    /// there; the files are opened.
    pub fn start(&mut self, origin_ns: u64) {
        self.origin_ns = origin_ns;
        self.files(0, "open");
    }

    /// One I/O (`act`: read, write, sync, datasync) issued at `now_ns`.
    #[inline]
    pub fn issued(&mut self, now_ns: u64, file: u32, act: &str, offset: u64, len: u64) {
        let us = self.us(now_ns);
        if self.error.is_none() {
            let name = &self.names[file as usize];
            if let Err(e) = writeln!(self.out, "{us} {name} {act} {offset} {len}") {
                self.error = Some(e);
            }
        }
    }

    /// Closes the files at `now_ns` and flushes; the stream's first error.
    pub fn finish(&mut self, now_ns: u64) -> Result<(), crate::EngineError> {
        let us = self.us(now_ns);
        self.files(us, "close");
        let r = match self.error.take() {
            Some(e) => Err(e),
            None => self.out.flush(),
        };
        r.map_err(|e| crate::EngineError::Backend {
            engine: "write_iolog",
            reason: format!("writing {}: {e}", self.path.display()),
        })
    }
}

/// What a log line's value is (fio's per-I/O logs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogValue {
    /// `_lat`: total latency, ns.
    Lat,
    /// `_clat`: completion latency, ns.
    Clat,
    /// `_slat`: submission latency, ns.
    Slat,
    /// `_bw`: the I/O's bytes over its clat, in bytes per ms (≈ KB/s), as fio.
    Bw,
    /// `_iops`: 1 per I/O, as fio.
    Iops,
}

impl LogValue {
    pub fn parse(s: &str) -> Option<LogValue> {
        Some(match s {
            "lat" => LogValue::Lat,
            "clat" => LogValue::Clat,
            "slat" => LogValue::Slat,
            "bw" => LogValue::Bw,
            "iops" => LogValue::Iops,
            _ => return None,
        })
    }

    fn of(self, r: &IoRecord) -> u64 {
        match self {
            LogValue::Lat => r.slat_ns + r.clat_ns,
            LogValue::Clat => r.clat_ns,
            LogValue::Slat => r.slat_ns,
            // fio: bytes * 1_000_000 / clat_ns, 0 when clat is 0.
            LogValue::Bw => (u64::from(r.len) * 1_000_000)
                .checked_div(r.clat_ns)
                .unwrap_or(0),
            LogValue::Iops => 1,
        }
    }
}

struct Stream {
    input: BufReader<File>,
    next: Option<IoRecord>,
}

impl Stream {
    fn advance(&mut self) -> std::io::Result<()> {
        let mut b = [0u8; RECORD_BYTES];
        self.next = match self.input.read_exact(&mut b) {
            Ok(()) => Some(IoRecord::decode(&b)),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => None,
            Err(e) => return Err(e),
        };
        Ok(())
    }
}

/// Writes fio's log of `value` from the record files `inputs` (merged in
/// time order, one record in memory per input) to `out`; returns the lines
/// written. `log_prio`: the priority column is the ioprio value as fio's
/// `0x%04x`; otherwise 1 for the realtime class and 0 for the rest (fio).
pub fn write_fio_log(
    inputs: &[PathBuf],
    out: &Path,
    value: LogValue,
    log_offset: bool,
    log_prio: bool,
) -> std::io::Result<u64> {
    let mut streams = Vec::with_capacity(inputs.len());
    for p in inputs {
        let f = File::open(p)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", p.display())))?;
        let mut s = Stream {
            input: BufReader::with_capacity(1 << 16, f),
            next: None,
        };
        s.advance()?;
        streams.push(s);
    }
    let mut w = BufWriter::with_capacity(1 << 16, File::create(out)?);
    let mut lines = 0;
    // A linear scan for the earliest head: a job has a handful of workers.
    while let Some(i) = (0..streams.len())
        .filter(|&i| streams[i].next.is_some())
        .min_by_key(|&i| streams[i].next.map(|r| r.time_ns))
    {
        let r = streams[i].next.expect("filtered on Some");
        write!(
            w,
            "{}, {}, {}, {}",
            r.time_ns / 1_000_000,
            value.of(&r),
            r.dir,
            r.len
        )?;
        if log_offset {
            write!(w, ", {}", r.offset)?;
        }
        if log_prio {
            writeln!(w, ", 0x{:04x}", r.ioprio)?;
        } else {
            writeln!(w, ", {}", u8::from(r.ioprio >> 13 == 1))?;
        }
        lines += 1;
        streams[i].advance()?;
    }
    w.flush()?;
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_merge_in_time_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = IoLogWriter::create(dir.path(), 0, 0).unwrap();
        let mut b = IoLogWriter::create(dir.path(), 0, 1).unwrap();
        let rec = |t: u64, dir: u8, prio: u16| IoRecord {
            time_ns: t,
            slat_ns: 1_000,
            clat_ns: 4_096_000,
            offset: t * 4096,
            len: 4096,
            ioprio: prio,
            dir,
        };
        a.record(&rec(1_000_000, 0, 0x2000));
        a.record(&rec(5_000_000, 1, 0x4004));
        b.record(&rec(3_000_000, 0, 0));
        a.finish().unwrap();
        b.finish().unwrap();
        let inputs = [record_path(dir.path(), 0, 0), record_path(dir.path(), 0, 1)];
        let out = dir.path().join("x_lat.log");
        assert_eq!(
            write_fio_log(&inputs, &out, LogValue::Lat, true, true).unwrap(),
            3
        );
        let text = std::fs::read_to_string(&out).unwrap();
        assert_eq!(
            text,
            "1, 4097000, 0, 4096, 4096000000, 0x2000\n\
             3, 4097000, 0, 4096, 12288000000, 0x0000\n\
             5, 4097000, 1, 4096, 20480000000, 0x4004\n"
        );
        write_fio_log(&inputs, &out, LogValue::Bw, false, false).unwrap();
        let text = std::fs::read_to_string(&out).unwrap();
        // 4096 bytes in 4.096 ms = 1000 bytes/ms; realtime class → 1.
        assert_eq!(text.lines().next().unwrap(), "1, 1000, 0, 4096, 1");
    }
}
