//! A worker's failures: which end the job and which it counts and goes on
//! past (fio's `continue_on_error`/`ignore_error`, rules in
//! `iolab_core::job::errors`), what it prints (`error_dump`), and the
//! count and first errno it reports (fio's `total_err`, `first_error`).
//!
//! Every failure is counted, fatal or not, over the whole job (fio counts
//! from the first I/O, ramp included); the measured window's per-direction
//! count stays in `DirStats::errors`.

use std::path::Path;

use iolab_core::job::{errno_name, ErrorKind, ErrorOptions, ExitWhat, IoDir};
use iolab_core::stats::WorkerResult;

use super::Control;
use crate::EngineError;

/// Failures seen so far by one worker.
#[derive(Debug)]
pub(super) struct ErrorState {
    opts: ErrorOptions,
    /// `job/worker`, for the printed lines.
    who: String,
    total: u64,
    first: i32,
}

impl ErrorState {
    pub fn new(opts: &ErrorOptions, job: &str, worker: u32) -> ErrorState {
        ErrorState {
            opts: opts.clone(),
            who: format!("{job}/{worker}"),
            total: 0,
            first: 0,
        }
    }

    /// Does the job go on after verify failures (continue_on_error=verify
    /// or all, or EILSEQ in ignore_error's verify list)?
    pub fn continues_on_verify(&self) -> bool {
        self.opts.non_fatal(ErrorKind::Verify, libc::EILSEQ)
    }

    /// One failed I/O: `result` is `-errno`, or 0 for a transfer that
    /// moved nothing (end of file: never non-fatal). Counts it, prints it
    /// when asked, and returns true when it must end the job.
    #[cold]
    pub fn io_failed(
        &mut self,
        path: &Path,
        dir: IoDir,
        offset: u64,
        len: u64,
        result: i64,
    ) -> bool {
        let errno = i32::try_from(-result).unwrap_or(0);
        self.count(errno.max(0), 1);
        let fatal = errno <= 0 || !self.opts.non_fatal(ErrorKind::of(dir, errno), errno);
        if !fatal && self.opts.error_dump {
            eprintln!(
                "iolab: {}: {} error on {} at offset={offset} bytes, len={len} bytes: {} ({}); \
                 continuing (continue_on_error)",
                self.who,
                dir.name(),
                path.display(),
                errno_name(errno),
                std::io::Error::from_raw_os_error(errno)
            );
        }
        fatal
    }

    /// The verify failures of the job at its end: counted as EILSEQ each.
    /// Returns the error that ends the job, or None when they are non-fatal.
    pub fn verify_failed(&mut self, e: EngineError) -> Option<EngineError> {
        let EngineError::Verify { failures, .. } = &e else {
            return Some(e);
        };
        self.count(libc::EILSEQ, *failures);
        if !self.continues_on_verify() {
            return Some(e);
        }
        if self.opts.error_dump {
            eprintln!("iolab: {}: {e}; continuing (continue_on_error)", self.who);
        }
        None
    }

    fn count(&mut self, errno: i32, n: u64) {
        if self.total == 0 && n > 0 {
            self.first = errno;
        }
        self.total += n;
    }

    /// exitall: stop what `exit_what` names. iolab runs one stonewall
    /// group at a time (its reporting groups are its stonewall groups), so
    /// `group` and `stonewall` both end the group running now and let the
    /// next one start; `all` ends the run.
    pub fn exit_others(&self, ctl: &Control) {
        let flag = match self.opts.exit_what {
            ExitWhat::Group | ExitWhat::Stonewall => &ctl.end_group,
            ExitWhat::All => &ctl.stop,
        };
        flag.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Puts fio's `total_err` and `first_error` into the result.
    pub fn report(&self, r: &mut WorkerResult) {
        r.total_err = self.total;
        r.first_error = self.first;
    }
}
