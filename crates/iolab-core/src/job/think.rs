//! fio's `thinktime_*` options: when a job with `thinktime` stalls, and
//! how the stall is spent (the worker's side is iolab-engine's
//! worker/think.rs).

use serde::{Deserialize, Serialize};

/// `thinktime_blocks_type`: which I/Os `thinktime_blocks` counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThinkBlocksType {
    /// Completed I/Os (fio's default): at iodepth > 1 an asynchronous
    /// engine may have issued up to iodepth I/Os before `thinktime_blocks`
    /// of them complete.
    #[default]
    Complete,
    /// Issued I/Os: at most `thinktime_blocks` are in flight between stalls.
    Issue,
}

/// The stall of `thinktime` and what triggers it (fio's `thinktime_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ThinkOptions {
    /// `thinktime_blocks`: stall after this many I/Os (issued or completed,
    /// by [`Self::blocks_type`]).
    pub blocks: u32,
    /// `thinktime_blocks` was written; without it a `thinktime_iotime`
    /// alone decides (fio: the default of 1 would stall after every I/O).
    pub blocks_given: bool,
    pub blocks_type: ThinkBlocksType,
    /// `thinktime_spin`: the part of each stall spent busy (the CPU spins
    /// on the clock) before sleeping the rest, ns; at most `thinktime`.
    pub spin_ns: u64,
    /// `thinktime_iotime`: also stall once I/O has run this long since the
    /// last stall, ns (0: off).
    pub iotime_ns: u64,
}

impl Default for ThinkOptions {
    fn default() -> ThinkOptions {
        ThinkOptions {
            blocks: 1,
            blocks_given: false,
            blocks_type: ThinkBlocksType::Complete,
            spin_ns: 0,
            iotime_ns: 0,
        }
    }
}

impl ThinkOptions {
    /// fio's defaults (left out of a serialized job, as older results have it).
    pub fn is_default(&self) -> bool {
        *self == ThinkOptions::default()
    }

    /// Whether a count of I/Os triggers the stall (fio: unless
    /// `thinktime_iotime` is given without `thinktime_blocks`).
    pub fn counts_blocks(&self) -> bool {
        self.iotime_ns == 0 || self.blocks_given
    }
}
