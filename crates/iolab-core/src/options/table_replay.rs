//! Option rows for fio's I/O logs: `write_iolog` (what the job issues,
//! written as fio's iolog v3) and `read_iolog` with its `replay_*`
//! options (a log replayed instead of generated I/O). [`apply_log`] reads
//! the log once while the job is prepared and derives what fio derives
//! from it: the files, the directions, the block sizes and, when not
//! given, the size. Part of the one option table (see `table`).

use super::draft::Draft;
use super::val::put;
use super::values::RwDirs;
use super::DefaultValue::{Note, Value};
use super::OptionDef;
use super::OptionKind::*;
use crate::engines::Target;
use crate::error::JobError;
use crate::gen::replay::IoLog;
use crate::job::{BsSpec, IoDir, LoadedLog, Pattern, ReplaySkip};

pub(super) static REPLAY_OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "write_iolog",
        set: |d, v| {
            put(
                &mut d.replay.write_iolog,
                v.some_text().map(|t| t.map(Into::into)),
            )
        },
        aliases: &[],
        kind: Text,
        default: Note("none"),
        unit: "",
        help: "Append every I/O the job issues to this file in fio's iolog version 3 \
               format (timestamps in µs from the worker's start, `FILE add|open|close` \
               and `FILE read|write OFFSET LENGTH` lines), for read_iolog to replay. As \
               fio, the file is appended to; one worker per log (numjobs=1).",
    },
    OptionDef {
        name: "read_iolog",
        set: |d, v| {
            put(
                &mut d.replay.read_iolog,
                v.some_text().map(|t| t.map(Into::into)),
            )
        },
        aliases: &[],
        kind: Text,
        default: Note("none"),
        unit: "",
        help: "Replay the reads, writes and syncs of this fio iolog (version 2 or 3, as fio and \
               iolab's write_iolog write them) instead of generating I/O: same files, \
               offsets, lengths and order, each issued when the log's timestamps say \
               (see replay_no_stall, replay_time_scale). The log sets the files (unless \
               replay_redirect), the directions and the block sizes; size defaults to the \
               furthest logged byte. A blktrace binary trace (one file: merge blktrace's \
               per-CPU files with `blkparse -i NAME -d FILE`) is read too, as fio reads it: \
               its queue events, sector × 512, onto /dev's device of the trace's \
               major:minor unless replay_redirect, with direct=1.",
    },
    OptionDef {
        name: "replay_no_stall",
        set: |d, v| put(&mut d.replay.no_stall, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "Replay the log's I/O as fast as possible, in its order, ignoring its \
               timestamps.",
    },
    OptionDef {
        name: "replay_time_scale",
        set: |d, v| put(&mut d.replay.time_scale_pct, v.u32_min(1)),
        aliases: &[],
        kind: Int,
        default: Value("100"),
        unit: "%",
        help: "Pace of the replay as a percentage of the log's: 200 issues twice as \
               fast, 50 half as fast.",
    },
    OptionDef {
        name: "replay_redirect",
        set: |d, v| {
            put(
                &mut d.replay.redirect,
                v.some_text().map(|t| t.map(Into::into)),
            )
        },
        aliases: &[],
        kind: Text,
        default: Note("the files the log names"),
        unit: "",
        help: "Replay every logged I/O onto this one file or device, whatever file the \
               log names.",
    },
    OptionDef {
        name: "replay_align",
        set: |d, v| {
            let n = v.size()?;
            if n > 0 && !n.is_power_of_two() {
                return Err(v.invalid("must be a power of 2"));
            }
            d.replay.align = n;
            Ok(())
        },
        aliases: &[],
        kind: Size,
        default: Note("as logged"),
        unit: "bytes",
        help: "Round each replayed offset down to a multiple of this (a power of 2), \
               after replay_scale.",
    },
    OptionDef {
        name: "replay_scale",
        set: |d, v| put(&mut d.replay.scale, v.u32_min(1).map(u64::from)),
        aliases: &[],
        kind: Int,
        default: Value("1"),
        unit: "",
        help: "Divide each replayed offset by this factor (with replay_align, to keep \
               the offsets aligned).",
    },
    OptionDef {
        name: "replay_skip",
        set: |d, v| put(&mut d.replay.skip, v.wrap(ReplaySkip::parse(v.text()))),
        aliases: &[],
        kind: Text,
        default: Note("none"),
        unit: "",
        help: "Leave these kinds of logged action out of the replay: a comma-separated \
               list of read, write, trim, sync (sync also covers datasync). fio 3.33 \
               honours it for blktrace input only; iolab for iologs too.",
    },
];

const REPLAY_ONLY: &[&str] = &[
    "replay_no_stall",
    "replay_time_scale",
    "replay_redirect",
    "replay_align",
    "replay_scale",
    "replay_skip",
];

/// Reads `read_iolog`'s log (once, here) and sets what it decides: the
/// files (for engines that do I/O to files: an NBD export or null takes
/// the log's one file, or its redirected files, as itself), rw, bs and
/// (when not given) size. A log that cannot be replayed
/// is an error naming its line.
pub(super) fn apply_log(d: &mut Draft) -> Result<(), JobError> {
    if d.replay.write_iolog.is_some() && d.numjobs > 1 {
        return Err(JobError::Conflict(format!(
            "write_iolog with numjobs={}: the clones would interleave their lines in one \
             log (fio warns of a corrupt file); give each job its own write_iolog and numjobs=1",
            d.numjobs
        )));
    }
    let Some(path) = d.replay.read_iolog.clone() else {
        for name in REPLAY_ONLY {
            if d.explicit.contains(name) {
                d.warnings
                    .push(format!("{name} has no effect without read_iolog"));
            }
        }
        return Ok(());
    };
    let log = IoLog::read(&path, &d.replay).map_err(|reason| JobError::InvalidValue {
        option: "read_iolog".into(),
        value: path.display().to_string(),
        reason,
    })?;
    let to_files = d.ioengine.caps().target == Target::Files;
    if !to_files && log.files.len() > 1 && d.replay.redirect.is_none() {
        return Err(JobError::Conflict(format!(
            "read_iolog's log names {} files, and ioengine={} has one place to replay them; \
             give replay_redirect= to replay them all there (as onto one device)",
            log.files.len(),
            d.ioengine.name()
        )));
    }
    if to_files && d.filename.is_some() && d.replay.redirect.is_none() {
        return Err(JobError::Conflict(
            "read_iolog replays onto the files its log names, so filename= would not be \
             used; to replay onto another file or device give replay_redirect= instead"
                .into(),
        ));
    }
    for name in ["rw", "bs", "blocksize", "bsrange", "bssplit"] {
        if d.explicit.contains(name) {
            d.warnings.push(format!(
                "{name} is replaced by what read_iolog's log does (as in fio)"
            ));
        }
    }
    let names: Vec<String> = log
        .files
        .iter()
        .map(|p| p.display().to_string().replace(':', "\\:"))
        .collect();
    if to_files {
        d.filename = Some(names.join(":"));
    }
    // The log's offsets are what they are: no random map or distribution
    // to check them against.
    d.pattern = Pattern::Sequential;
    let (reads, writes) = (log.count(IoDir::Read), log.count(IoDir::Write));
    d.dirs = match (reads, writes) {
        (_, 0) => RwDirs::Read,
        (0, _) => RwDirs::Write,
        _ => {
            d.read_pct = ((reads * 100 / (reads + writes)) as u32).clamp(1, 99);
            RwDirs::Mixed
        }
    };
    for dir in IoDir::ALL {
        let (min, max) = (log.min_len(dir), log.max_len(dir));
        if max > 0 {
            d.bs[dir as usize] = if min == max {
                BsSpec::Fixed(max)
            } else {
                BsSpec::Range { min, max }
            };
        }
    }
    if d.size.is_none() {
        let furthest = log.extents().into_iter().max().unwrap_or(0);
        d.size = Some(furthest * log.files.len() as u64);
    }
    if log.version == 0 && !d.direct {
        // fio's rule for blktrace input: read-ahead would add I/O that the
        // trace does not have.
        if d.explicit.contains("direct") {
            d.warnings.push(
                "read_iolog's blktrace trace replays with direct=1, as in fio (read-ahead \
                 would add I/O the trace does not have): direct=0 is overridden"
                    .into(),
            );
        }
        d.direct = true;
    }
    d.replay.has_trims = log.count(IoDir::Trim) > 0;
    d.replay.log = LoadedLog(Some(std::sync::Arc::new(log)));
    Ok(())
}
