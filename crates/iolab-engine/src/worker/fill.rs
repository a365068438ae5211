//! `fill_device` / `fill_fs` in the worker: a write that fails with ENOSPC
//! (no space left) or EDQUOT (quota reached) ends the job's writing without
//! an error, as fio ends a fill_device job there; the I/Os still in flight
//! finish, and what was written is the result. Any other failure, or these
//! errors without fill_device, stays an error.

use iolab_core::job::IoDir;

use super::Worker;
use crate::backend::Backend;

impl<B: Backend> Worker<B> {
    /// True when a failed I/O (`result` = -errno) is the end of a
    /// fill_device job, which then issues nothing more.
    #[cold]
    pub(super) fn space_ran_out(&mut self, dir: IoDir, result: i64) -> bool {
        let full = result == -i64::from(libc::ENOSPC) || result == -i64::from(libc::EDQUOT);
        if !self.limits.fill_device || dir != IoDir::Write || !full {
            return false;
        }
        self.limits.space_full = true;
        self.src.gen_done = true;
        self.src.pending = None;
        true
    }
}
