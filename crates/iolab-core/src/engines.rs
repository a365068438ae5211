//! The engine table: every I/O engine iolab has, one row each — its name
//! as fio spells it, what it can do ([`EngineCaps`]), its backend in
//! iolab-engine, and one line of help.
//!
//! Everything that depends on the engine asks this table: the option layer
//! (`ioengine=`'s accepted names and help, and whether an engine can honour
//! iodepth, cmdprio_*, hipri, atomic=1, io_submit_mode=offload, verify …),
//! the engine's file layout, and the engine crate, which expands the same
//! rows once to declare its backend modules and to pick a worker's backend
//! type (static dispatch: chosen once per worker, never per I/O; see
//! iolab-engine's `backend` module).
//!
//! The rows are an X-macro ([`engine_table!`]): it hands them to a macro
//! of the caller's, so core and engine read one list and a row cannot be
//! half-added. `backend` names a module of iolab-engine's `src/backend/`
//! and the type in it; core only carries those tokens along.
//!
//! Adding an engine = its backend file in iolab-engine's `src/backend/`
//! plus one row here (and its tests): docs/architecture.md, "Adding an
//! engine". New rows go at the end, so the order of the names in messages
//! and docs stays.

use serde::{Deserialize, Serialize};

/// The engine rows. `$callback` is a macro of the caller's that takes
/// `Variant { name: "…", backend: module::Type, caps: EXPR, help: "…" }`
/// rows separated by commas.
#[macro_export]
#[rustfmt::skip] // rustfmt would move the help strings' continuation lines
macro_rules! engine_table {
    ($callback:ident) => {
        $callback! {
            IoUring {
                name: "io_uring",
                backend: uring::UringBackend,
                caps: EngineCaps { per_io_prio: true, hipri: true, atomic: true, ..QUEUED_FILES },
                help: "io_uring's submission and completion rings; asynchronous: honours \
                       iodepth and the iodepth_batch options",
            },
            Libaio {
                name: "libaio",
                backend: libaio::LibaioBackend,
                caps: EngineCaps {
                    per_io_prio: true,
                    atomic: true,
                    buffered_note: Some(
                        "ioengine=libaio without direct=1: Linux completes buffered AIO inside \
                         io_submit, so the queue depth is not real (fio behaves the same); add \
                         direct=1",
                    ),
                    ..QUEUED_FILES
                },
                help: "Linux native AIO, io_submit/io_getevents; asynchronous: honours iodepth \
                       and the iodepth_batch options (with direct=1)",
            },
            Psync {
                name: "psync",
                backend: psync::PsyncBackend,
                caps: SYNC_FILES,
                help: "pread/pwrite, fio's default on Linux; synchronous",
            },
            Sync {
                name: "sync",
                backend: sync::SyncBackend,
                caps: EngineCaps {
                    offload_refused: Some(
                        "its file position would be shared by the threads; use psync",
                    ),
                    ..SYNC_FILES
                },
                help: "lseek then read/write; synchronous",
            },
            Pvsync {
                name: "pvsync",
                backend: pvsync::PvsyncBackend,
                caps: SYNC_FILES,
                help: "preadv/pwritev; synchronous",
            },
            Pvsync2 {
                name: "pvsync2",
                backend: pvsync2::Pvsync2Backend,
                caps: EngineCaps { hipri: true, atomic: true, ..SYNC_FILES },
                help: "preadv2/pwritev2, see hipri; synchronous",
            },
            Mmap {
                name: "mmap",
                backend: mmap::MmapBackend,
                caps: EngineCaps {
                    direct_note: Some(
                        "direct=1 has no effect on ioengine=mmap's copies (the mapping goes \
                         through the page cache)",
                    ),
                    ..SYNC_FILES
                },
                help: "copies to and from a shared mapping; syncs are msync; synchronous",
            },
            Null {
                name: "null",
                backend: null::NullBackend,
                caps: EngineCaps { target: Target::Discarded, ..QUEUED_FILES },
                help: "no I/O, measures iolab itself",
            },
            Nbd {
                name: "nbd",
                backend: nbd::NbdBackend,
                caps: EngineCaps {
                    target: Target::NbdExport,
                    direct_note: Some(
                        "direct=1 has no effect with ioengine=nbd: the server decides how it \
                         caches",
                    ),
                    ..QUEUED_FILES
                },
                help: "requests to an NBD server named by uri=, pipelined up to iodepth",
            },
            Cpuio {
                name: "cpuio",
                backend: cpuio::CpuioBackend,
                caps: EngineCaps {
                    target: Target::NoIo,
                    offload_refused: Some(""),
                    trims: false,
                    ..QUEUED_FILES
                },
                help: "no I/O: burns cpuload % of a CPU beside other jobs",
            },
            Vsync {
                name: "vsync",
                backend: vsync::VsyncBackend,
                caps: EngineCaps {
                    offload_refused: Some(
                        "its file position would be shared by the threads; use psync",
                    ),
                    ..QUEUED_FILES
                },
                help: "lseek then readv/writev, one call per run of neighbouring I/Os staged \
                       together (iodepth_batch_submit), as fio merges them; the calls block",
            },
            Posixaio {
                name: "posixaio",
                backend: posixaio::PosixAioBackend,
                caps: QUEUED_FILES,
                help: "POSIX AIO through the C library (aio_read/aio_write, aio_suspend); \
                       asynchronous: honours iodepth, with or without direct=1",
            },
        }
    };
}

/// Where an engine's I/O goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The job's files or devices (`filename=`, or files iolab lays out).
    Files,
    /// Nowhere: each I/O completes at once and moves no data (null).
    Discarded,
    /// An NBD server's export (`uri=`); its size comes from the server.
    NbdExport,
    /// No I/O at all: the worker burns CPU instead (cpuio's `cpuload=`).
    NoIo,
}

impl Target {
    /// The engine opens the job's files (and so needs them laid out).
    pub const fn opens_files(self) -> bool {
        matches!(self, Target::Files)
    }
}

/// What an engine can do: the questions the option layer, the layout and
/// the worker ask, answered once per engine in its row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineCaps {
    /// Each I/O completes inside its system call: one I/O in flight per
    /// worker whatever iodepth says (fio's FIO_SYNCIO), unless
    /// io_submit_mode=offload. The backend's `Backend::SYNC` must agree
    /// (checked when iolab-engine compiles).
    pub synchronous: bool,
    pub target: Target,
    /// A priority travels with each request, so `cmdprio_*` can set one
    /// per I/O (fio: io_uring and libaio).
    pub per_io_prio: bool,
    /// `hipri` is honoured (RWF_HIPRI; io_uring: IORING_SETUP_IOPOLL).
    pub hipri: bool,
    /// Writes can carry `RWF_ATOMIC` (`atomic=1`).
    pub atomic: bool,
    /// Why `io_submit_mode=offload` cannot run it (`Some("")`: no reason
    /// beyond the engine itself); `None`: it can.
    pub offload_refused: Option<&'static str>,
    /// The warning when `direct=1` has no effect on it.
    pub direct_note: Option<&'static str>,
    /// The warning when it runs without `direct=1`.
    pub buffered_note: Option<&'static str>,
    /// Can issue trims (`rw=trim`, …): files by fallocate(PUNCH_HOLE) or
    /// BLKDISCARD, NBD by NBD_CMD_TRIM, null by doing nothing.
    pub trims: bool,
}

/// A synchronous engine over the job's files (psync and its kin).
pub const SYNC_FILES: EngineCaps = EngineCaps {
    synchronous: true,
    ..QUEUED_FILES
};

/// An engine that keeps iodepth I/Os in flight over the job's files.
pub const QUEUED_FILES: EngineCaps = EngineCaps {
    synchronous: false,
    target: Target::Files,
    per_io_prio: false,
    hipri: false,
    atomic: false,
    offload_refused: None,
    direct_note: None,
    buffered_note: None,
    trims: true,
};

/// Expands the rows in core: the enum, its names, capabilities and help.
macro_rules! core_rows {
    ($(
        $variant:ident {
            name: $name:literal,
            backend: $module:ident :: $backend:ident,
            caps: $caps:expr,
            help: $help:literal $(,)?
        }
    ),* $(,)?) => {
        /// An I/O engine: one row of the engine table (the variant's doc is
        /// its help).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum IoEngine {
            $(
                #[doc = $help]
                #[serde(rename = $name)]
                $variant,
            )*
        }

        /// Every engine, in the table's order.
        pub const ENGINES: &[IoEngine] = &[$(IoEngine::$variant),*];

        /// Every engine's name, in the table's order (`ioengine=`'s values).
        pub const ENGINE_NAMES: &[&str] = &[$($name),*];

        /// `ioengine=`'s help: one clause per row.
        pub const IOENGINE_HELP: &str = concat!(
            "How I/O is issued (one row each in the engine table, see docs/architecture.md):",
            $(" ", $name, ": ", $help, ".",)*
        );

        impl IoEngine {
            /// The name as fio spells it (`ioengine=` value).
            pub const fn name(self) -> &'static str {
                match self {
                    $(IoEngine::$variant => $name,)*
                }
            }

            /// What this engine can do.
            pub const fn caps(self) -> EngineCaps {
                match self {
                    $(IoEngine::$variant => $caps,)*
                }
            }
        }
    };
}

engine_table!(core_rows);

impl IoEngine {
    /// The engine named `name` (exactly as fio spells it).
    pub fn from_name(name: &str) -> Option<IoEngine> {
        ENGINES.iter().copied().find(|e| e.name() == name)
    }

    /// True for engines that complete each I/O inside its system call (one
    /// I/O in flight per worker whatever iodepth says, as in fio).
    pub const fn synchronous(self) -> bool {
        self.caps().synchronous
    }

    /// The names of the engines whose capabilities pass `can`, in the
    /// table's order: for messages that say which engines would do.
    pub fn names_that(can: impl Fn(&EngineCaps) -> bool) -> Vec<&'static str> {
        ENGINES
            .iter()
            .filter(|e| can(&e.caps()))
            .map(|e| e.name())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_round_trip() {
        for (i, e) in ENGINES.iter().enumerate() {
            assert_eq!(IoEngine::from_name(e.name()), Some(*e));
            assert_eq!(ENGINE_NAMES[i], e.name());
            let json = serde_json::to_string(e).unwrap();
            assert_eq!(json, format!("\"{}\"", e.name()));
        }
        let mut names = ENGINE_NAMES.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ENGINES.len());
    }
}
