//! blktrace's binary traces as `read_iolog` input, as fio replays them: a
//! file of `struct blk_io_trace` records (Linux's `blktrace_api.h`, version
//! 7, written in the tracing machine's byte order; the per-CPU files that
//! `blktrace` writes are merged first with `blkparse -i NAME -d FILE`).
//!
//! Written here by hand: no crate reads blktrace's format, which is one
//! fixed 48-byte record plus a payload to skip.
//!
//! What becomes an I/O follows fio's `blktrace.c`:
//! - only queue events (`Q`, `__BLK_TA_QUEUE`) count — the later events of
//!   the same request (get, insert, issue, complete) are the block layer's
//!   own doing; passthrough (`BLK_TC_PC`) and notify records are skipped;
//! - a read or write goes to sector × 512, for the record's bytes (a queue
//!   event of 0 bytes moves no data and is skipped); a discard is a trim
//!   (its record carries the write category too: it is not a write);
//!   a flush is a sync issued after the I/O before it. A write that also
//!   carries a flush (REQ_PREFLUSH) is replayed as the flush and then the
//!   write (fio replays only the flush);
//! - each is due the gap since the previous record of any kind, when that
//!   record came from the same CPU (fio's `delay`, in whole µs), so gaps
//!   across CPUs count as 0, as in fio;
//! - the device (major:minor) is the file: `/dev/NAME` from
//!   `/sys/dev/block/MAJ:MIN`, unless `replay_redirect` names one file for
//!   all of them. The replay_* options then apply as to text logs.

use std::path::PathBuf;

use super::replay::{IoLog, LoggedIo};
use super::IoUnit;
use crate::job::{IoDir, ReplayOptions};

/// `BLK_IO_TRACE_MAGIC`: the top 24 bits of a record's first word.
const MAGIC: u32 = 0x6561_7400;
/// `BLK_IO_TRACE_VERSION`, the low 8 bits.
const VERSION: u32 = 0x07;
/// One record without its payload.
pub const RECORD_BYTES: usize = 48;

// Actions: the low 16 bits say what happened, the high 16 the categories.
const TA_QUEUE: u32 = 1;
const fn category(bit: u32) -> u32 {
    1 << (bit + 16)
}
const TC_WRITE: u32 = category(1);
const TC_FLUSH: u32 = category(2);
const TC_PC: u32 = category(9);
const TC_NOTIFY: u32 = category(10);
const TC_DISCARD: u32 = category(13);

/// Whether `bytes` begin with a blktrace record (either byte order).
pub fn is_blktrace(bytes: &[u8]) -> bool {
    bytes.len() >= 4 && byte_order(bytes).is_some()
}

/// `Some(true)` for little-endian records, `Some(false)` for big-endian.
fn byte_order(bytes: &[u8]) -> Option<bool> {
    let w = [bytes[0], bytes[1], bytes[2], bytes[3]];
    if u32::from_le_bytes(w) & 0xffff_ff00 == MAGIC {
        Some(true)
    } else if u32::from_be_bytes(w) & 0xffff_ff00 == MAGIC {
        Some(false)
    } else {
        None
    }
}

/// The fields of one record that the replay reads.
#[derive(Debug, Clone, Copy)]
struct Record {
    magic: u32,
    time_ns: u64,
    sector: u64,
    bytes: u32,
    action: u32,
    device: u32,
    cpu: u32,
    pdu_len: u16,
}

fn record(b: &[u8], le: bool) -> Record {
    let u32_at = |i: usize| {
        let w = [b[i], b[i + 1], b[i + 2], b[i + 3]];
        if le {
            u32::from_le_bytes(w)
        } else {
            u32::from_be_bytes(w)
        }
    };
    let u64_at = |i: usize| {
        let (lo, hi) = (u64::from(u32_at(i)), u64::from(u32_at(i + 4)));
        if le {
            lo | hi << 32
        } else {
            hi | lo << 32
        }
    };
    let pdu = [b[46], b[47]];
    Record {
        magic: u32_at(0),
        // sequence at 4
        time_ns: u64_at(8),
        sector: u64_at(16),
        bytes: u32_at(24),
        action: u32_at(28),
        // pid at 32
        device: u32_at(36),
        cpu: u32_at(40),
        // error at 44
        pdu_len: if le {
            u16::from_le_bytes(pdu)
        } else {
            u16::from_be_bytes(pdu)
        },
    }
}

/// The kernel's dev_t in a trace: 12 bits of major above 20 of minor.
fn major_minor(dev: u32) -> (u32, u32) {
    (dev >> 20, dev & ((1 << 20) - 1))
}

/// `/dev/NAME` of block device `maj:min` on this machine, from sysfs.
pub fn device_path(maj: u32, min: u32) -> Option<PathBuf> {
    let uevent = std::fs::read_to_string(format!("/sys/dev/block/{maj}:{min}/uevent")).ok()?;
    uevent
        .lines()
        .find_map(|l| l.strip_prefix("DEVNAME="))
        .map(|n| PathBuf::from("/dev").join(n))
}

/// Parses a blktrace file's bytes; `device` names the file of a device
/// (see [`device_path`]; a parameter so tests need no such device). The
/// error is one line naming the record at fault.
pub fn parse(
    bytes: &[u8],
    opts: &ReplayOptions,
    device: impl Fn(u32, u32) -> Option<PathBuf>,
) -> Result<IoLog, String> {
    let le = byte_order(bytes).ok_or("not a blktrace file (no blktrace magic)")?;
    let mut p = Parse {
        opts,
        device,
        log: IoLog {
            version: 0,
            files: opts.redirect.iter().cloned().collect(),
            ios: Vec::new(),
        },
        devices: Vec::new(),
        clock_us: 0,
        pending_sync: None,
    };
    let (mut at, mut n) = (0usize, 0u64);
    let (mut last_ns, mut last_cpu) = (0u64, 0u32);
    while at < bytes.len() {
        n += 1;
        let b = bytes.get(at..at + RECORD_BYTES).ok_or_else(|| {
            format!(
                "record {n} is cut short ({} of {RECORD_BYTES} bytes at byte {at})",
                bytes.len() - at
            )
        })?;
        let r = record(b, le);
        if r.magic & 0xffff_ff00 != MAGIC {
            return Err(format!("record {n} (byte {at}) has no blktrace magic"));
        }
        if r.magic & 0xff != VERSION {
            return Err(format!(
                "record {n} is of blktrace version {}; iolab (as fio) reads version {VERSION}",
                r.magic & 0xff
            ));
        }
        at += RECORD_BYTES + usize::from(r.pdu_len);
        if at > bytes.len() {
            return Err(format!("record {n}'s payload is cut short"));
        }
        if r.action & TC_NOTIFY != 0 {
            continue;
        }
        // fio's delay: the gap since the previous record, same CPU only.
        if last_ns == 0 {
            (last_ns, last_cpu) = (r.time_ns, r.cpu);
        }
        let gap_ns = if r.cpu == last_cpu {
            r.time_ns.saturating_sub(last_ns)
        } else {
            0
        };
        (last_ns, last_cpu) = (r.time_ns, r.cpu);
        if r.action & 0xffff != TA_QUEUE || r.action & TC_PC != 0 {
            continue;
        }
        p.queued(&r, gap_ns / 1000)
            .map_err(|e| format!("record {n}: {e}"))?;
    }
    if p.log.ios.is_empty() {
        return Err(
            "the trace has no queued read, write or trim to replay (after replay_skip)".into(),
        );
    }
    Ok(p.log)
}

struct Parse<'a, D> {
    opts: &'a ReplayOptions,
    device: D,
    log: IoLog,
    /// Devices (major, minor) in the order first seen.
    devices: Vec<(u32, u32)>,
    clock_us: u64,
    /// A flush seen before any I/O it could follow.
    pending_sync: Option<u32>,
}

impl<D: Fn(u32, u32) -> Option<PathBuf>> Parse<'_, D> {
    fn file(&mut self, dev: u32) -> Result<u32, String> {
        let mm = major_minor(dev);
        if let Some(i) = self.devices.iter().position(|&d| d == mm) {
            return Ok(if self.opts.redirect.is_some() {
                0
            } else {
                i as u32
            });
        }
        if self.opts.redirect.is_none() {
            let path = (self.device)(mm.0, mm.1).ok_or_else(|| {
                format!(
                    "the trace names block device {}:{}, which this machine does not have; \
                     give replay_redirect= to replay onto a file or device of yours",
                    mm.0, mm.1
                )
            })?;
            self.log.files.push(path);
        }
        self.devices.push(mm);
        self.file(dev)
    }

    fn queued(&mut self, r: &Record, gap_us: u64) -> Result<(), String> {
        self.clock_us += gap_us;
        let file = self.file(r.device)?;
        let flush = r.action & TC_FLUSH != 0;
        let discard = r.action & TC_DISCARD != 0;
        if flush && !discard && !self.opts.skip.sync {
            match self.log.ios.last_mut() {
                Some(io) => io.sync_after = Some((file, false)),
                None => self.pending_sync = Some(file),
            }
        }
        if r.bytes == 0 {
            return Ok(());
        }
        let dir = if discard {
            IoDir::Trim
        } else if r.action & TC_WRITE != 0 {
            IoDir::Write
        } else {
            IoDir::Read
        };
        let skip = &self.opts.skip;
        if match dir {
            IoDir::Read => skip.read,
            IoDir::Write => skip.write,
            IoDir::Trim => skip.trim,
        } {
            return Ok(());
        }
        if self.pending_sync.take().is_some() {
            return Err(
                "a flush before any read or write: nothing to replay it after; set \
                 replay_skip=sync to leave flushes out"
                    .into(),
            );
        }
        let offset = r
            .sector
            .checked_mul(512)
            .ok_or_else(|| format!("sector {} is beyond any device", r.sector))?;
        let mut offset = offset / self.opts.scale.max(1);
        if self.opts.align > 0 {
            offset &= !(self.opts.align - 1);
        }
        self.log.ios.push(LoggedIo {
            at_ns: self.clock_us.saturating_mul(1000),
            unit: IoUnit {
                dir,
                file,
                offset,
                len: u64::from(r.bytes),
            },
            sync_after: None,
        });
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// One record as `blktrace` writes it (little-endian here).
    pub(crate) struct Rec {
        pub time_ns: u64,
        pub sector: u64,
        pub bytes: u32,
        pub action: u32,
        pub cpu: u32,
        pub pdu: Vec<u8>,
    }

    pub(crate) const Q_READ: u32 = TA_QUEUE;
    pub(crate) const Q_WRITE: u32 = TA_QUEUE | TC_WRITE;
    const DEV: u32 = (8 << 20) | 16;

    pub(crate) fn encode(recs: &[Rec], le: bool) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, r) in recs.iter().enumerate() {
            let w32 = |o: &mut Vec<u8>, v: u32| {
                o.extend(if le { v.to_le_bytes() } else { v.to_be_bytes() })
            };
            let w64 = |o: &mut Vec<u8>, v: u64| {
                o.extend(if le { v.to_le_bytes() } else { v.to_be_bytes() })
            };
            w32(&mut out, MAGIC | VERSION);
            w32(&mut out, i as u32);
            w64(&mut out, r.time_ns);
            w64(&mut out, r.sector);
            w32(&mut out, r.bytes);
            w32(&mut out, r.action);
            w32(&mut out, 4242);
            w32(&mut out, DEV);
            w32(&mut out, r.cpu);
            out.extend([0, 0]);
            let pdu = r.pdu.len() as u16;
            out.extend(if le {
                pdu.to_le_bytes()
            } else {
                pdu.to_be_bytes()
            });
            out.extend(&r.pdu);
        }
        out
    }

    fn rec(time_ns: u64, sector: u64, bytes: u32, action: u32) -> Rec {
        Rec {
            time_ns,
            sector,
            bytes,
            action,
            cpu: 0,
            pdu: Vec::new(),
        }
    }

    fn opts() -> ReplayOptions {
        ReplayOptions {
            scale: 1,
            time_scale_pct: 100,
            ..Default::default()
        }
    }

    fn dev(maj: u32, min: u32) -> Option<PathBuf> {
        (maj == 8 && min == 16).then(|| PathBuf::from("/dev/sdb"))
    }

    fn units(log: &IoLog) -> Vec<(IoDir, u64, u64, u64)> {
        log.ios
            .iter()
            .map(|io| (io.unit.dir, io.unit.offset, io.unit.len, io.at_ns / 1000))
            .collect()
    }

    /// A request's life: queued, then the block layer's own events for it
    /// (merge, sleep, issue, complete) — only the queue events are
    /// replayed, each due fio's delay.
    #[test]
    fn queue_events_become_ios_with_fios_delays() {
        let mut recs = Vec::new();
        for (i, (sector, action)) in [(2048u64, Q_READ), (4096, Q_WRITE), (8, Q_READ)]
            .iter()
            .enumerate()
        {
            let t = 1_000_000 + i as u64 * 100_000;
            recs.push(rec(t, *sector, 8192, *action));
            for (k, later) in [3u32, 5, 7, 8].iter().enumerate() {
                recs.push(rec(
                    t + 10_000 * (k as u64 + 1),
                    *sector,
                    8192,
                    *later | (*action & TC_WRITE),
                ));
            }
        }
        recs.push(Rec {
            pdu: b"iolab".to_vec(),
            ..rec(1_050_000, 0, 0, TC_NOTIFY)
        });
        for le in [true, false] {
            let log = parse(&encode(&recs, le), &opts(), dev).unwrap();
            assert_eq!(log.files, [PathBuf::from("/dev/sdb")]);
            // Each queue event is due the gap since the record before it
            // (the previous request's complete, 40 µs after its queue):
            // 0, then 60 µs, then 60 µs more — fio's arithmetic.
            assert_eq!(
                units(&log),
                [
                    (IoDir::Read, 2048 * 512, 8192, 0),
                    (IoDir::Write, 4096 * 512, 8192, 60),
                    (IoDir::Read, 8 * 512, 8192, 120),
                ],
                "little-endian: {le}"
            );
        }
    }

    #[test]
    fn gaps_across_cpus_and_passthrough_count_as_fio_counts_them() {
        let mut b = rec(1_500_000, 16, 4096, Q_READ);
        b.cpu = 1;
        let recs = [
            rec(1_000_000, 8, 4096, Q_READ),
            b,
            rec(1_700_000, 24, 4096, Q_READ | TC_PC),
            rec(1_900_000, 32, 4096, Q_READ | TC_WRITE),
        ];
        let log = parse(&encode(&recs, true), &opts(), dev).unwrap();
        // The second is on another CPU (gap 0); the PC record moves the
        // clock's reference but is not replayed (gap 200 µs to the last).
        assert_eq!(
            units(&log),
            [
                (IoDir::Read, 8 * 512, 4096, 0),
                (IoDir::Read, 16 * 512, 4096, 0),
                (IoDir::Write, 32 * 512, 4096, 200),
            ]
        );
    }

    #[test]
    fn flushes_discards_and_the_replay_options() {
        let recs = [
            rec(1_000_000, 8, 4096, Q_WRITE),
            rec(1_000_100, 0, 0, TA_QUEUE | TC_FLUSH | TC_WRITE),
            rec(1_000_200, 16, 4096, Q_WRITE | TC_FLUSH),
            rec(1_000_300, 64, 65536, TA_QUEUE | TC_DISCARD | TC_WRITE),
            rec(1_000_400, 4097, 4096, Q_READ),
        ];
        let bytes = encode(&recs, true);
        let all = parse(&bytes, &opts(), dev).unwrap();
        // The discard is a trim of its bytes, not a write.
        let t = all.ios[2].unit;
        assert_eq!((t.dir, t.offset, t.len), (IoDir::Trim, 64 * 512, 65536));
        assert_eq!(all.count(IoDir::Write), 2);
        let mut o = opts();
        o.skip.trim = true;
        let log = parse(&bytes, &o, dev).unwrap();
        // The empty flush follows the first write; the write with a flush
        // is the flush (after the I/O before it, the first write again)
        // and then the write.
        assert_eq!(log.ios.len(), 3);
        assert_eq!(log.ios[0].sync_after, Some((0, false)));
        assert_eq!(log.ios[1].sync_after, None);
        o.skip.sync = true;
        o.skip.read = true;
        o.scale = 2;
        o.align = 4096;
        o.redirect = Some(PathBuf::from("/tmp/x"));
        let log = parse(&bytes, &o, |_, _| None).unwrap();
        assert_eq!(log.files, [PathBuf::from("/tmp/x")]);
        assert!(log.ios.iter().all(|io| io.sync_after.is_none()));
        assert_eq!(
            log.ios.iter().map(|io| io.unit.offset).collect::<Vec<_>>(),
            [0, 4096]
        );
    }

    #[test]
    fn bad_traces_are_one_clear_line() {
        let good = encode(&[rec(1, 8, 4096, Q_READ)], true);
        let e = parse(&good[..40], &opts(), dev).unwrap_err();
        assert_eq!(e, "record 1 is cut short (40 of 48 bytes at byte 0)");
        let mut v6 = good.clone();
        v6[0] = 0x06;
        assert!(parse(&v6, &opts(), dev).unwrap_err().contains("version 6"));
        let mut no_pdu = encode(
            &[Rec {
                pdu: vec![1, 2, 3],
                ..rec(1, 8, 4096, Q_READ)
            }],
            true,
        );
        no_pdu.truncate(50);
        assert_eq!(
            parse(&no_pdu, &opts(), dev).unwrap_err(),
            "record 1's payload is cut short"
        );
        let e = parse(&good, &opts(), |_, _| None).unwrap_err();
        assert!(
            e.contains("block device 8:16, which this machine does not have")
                && e.contains("replay_redirect="),
            "{e}"
        );
        let e = parse(&encode(&[rec(1, 8, 0, Q_READ)], true), &opts(), dev).unwrap_err();
        assert!(e.contains("no queued read, write or trim"), "{e}");
        assert!(!is_blktrace(b"fio version 3 iolog\n"));
        assert!(is_blktrace(&good));
    }
}
