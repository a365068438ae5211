//! fio's I/O log options (`write_iolog`, `read_iolog`, `replay_*`): what a
//! job records of the I/O it issues, and which log it replays instead of
//! generating I/O. The log itself is parsed by [`crate::gen::replay`].

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// `replay_skip`: the kinds of logged action left out of a replay.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReplaySkip {
    pub read: bool,
    pub write: bool,
    pub trim: bool,
    pub sync: bool,
}

impl ReplaySkip {
    /// fio's list: `read,write,trim,sync` in any order, comma-separated.
    pub fn parse(text: &str) -> Result<ReplaySkip, String> {
        let mut s = ReplaySkip::default();
        for part in text.split(',').map(str::trim) {
            match part {
                "read" => s.read = true,
                "write" => s.write = true,
                "trim" => s.trim = true,
                "sync" => s.sync = true,
                _ => {
                    return Err(format!(
                        "unknown kind '{part}': expected a comma-separated list of read, write, trim, sync"
                    ))
                }
            }
        }
        Ok(s)
    }
}

/// The I/O log options of a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReplayOptions {
    /// `write_iolog`: each issued I/O is appended to this file in fio's
    /// iolog version 3 format.
    pub write_iolog: Option<PathBuf>,
    /// `read_iolog`: the log (fio's iolog v2 or v3) whose I/O the job
    /// replays instead of generating its own.
    pub read_iolog: Option<PathBuf>,
    /// `replay_no_stall`: issue as fast as possible, in the log's order.
    pub no_stall: bool,
    /// `replay_time_scale`: percent of the log's pace (200 = twice as fast).
    pub time_scale_pct: u32,
    /// `replay_redirect`: every logged I/O goes to this one file.
    pub redirect: Option<PathBuf>,
    /// `replay_align`: offsets rounded down to a multiple of this (a power
    /// of 2; 0 = as logged).
    pub align: u64,
    /// `replay_scale`: offsets divided by this (1 = as logged).
    pub scale: u64,
    pub skip: ReplaySkip,
    /// The log has `trim` lines that are replayed (set when it is read).
    pub has_trims: bool,
    /// The log as read while the job was prepared, shared by the job's
    /// workers so that it is parsed once per preparation.
    #[serde(skip)]
    pub log: LoadedLog,
}

/// `read_iolog`'s parsed log, kept beside the options: a cache of the
/// file, not part of what the job is — never written to results, and
/// equal to any other (a job read back from JSON is the same job).
#[derive(Debug, Clone, Default)]
pub struct LoadedLog(pub Option<Arc<crate::gen::replay::IoLog>>);

impl PartialEq for LoadedLog {
    fn eq(&self, _: &LoadedLog) -> bool {
        true
    }
}

impl Eq for LoadedLog {}

impl Default for ReplayOptions {
    fn default() -> ReplayOptions {
        ReplayOptions {
            write_iolog: None,
            read_iolog: None,
            no_stall: false,
            time_scale_pct: 100,
            redirect: None,
            align: 0,
            scale: 1,
            skip: ReplaySkip::default(),
            has_trims: false,
            log: LoadedLog::default(),
        }
    }
}
