//! I/O priorities in a worker (fio's prio/prioclass/priohint and cmdprio):
//! the thread's own priority (`ioprio_set`, before any I/O), each request's
//! priority drawn per I/O for io_uring and libaio, and completion latency
//! per priority (fio's `prios` in json) for jobs with cmdprio options; and
//! the worker's per-completion extras (per-priority latency and the per-I/O
//! record of `iolog`), kept out of the hot path of jobs that ask for neither.
//!
//! The draw uses the worker's own xorshift generator (seeded from the job's
//! seed), so it takes no lock and repeats with the seed.

use iolab_core::hist::LatHist;
use iolab_core::job::{PreparedJob, PrioOptions};
use iolab_core::stats::{DirStats, PrioStat};

use super::io_loop::Slot;
use super::Worker;
use crate::backend::Backend;
use crate::EngineError;
use iolab_core::gen::IoUnit;

/// Linux's IOPRIO_WHO_PROCESS: with who = 0, the calling thread.
const IOPRIO_WHO_PROCESS: libc::c_int = 1;

/// `realtime=1`: puts the calling thread under `SCHED_FIFO` at priority 1
/// (the lowest real-time one) with 1 ns of timer slack; threads it starts
/// later (the offload pool's) inherit both. The target's serving threads
/// do the same under `iolab target --realtime` (iolab-target's
/// conn/sched.rs): a busy machine's ordinary threads then cannot keep a
/// completion waiting for a time slice.
pub fn set_thread_realtime() -> Result<(), EngineError> {
    // Safety: prctl with integer arguments on the calling thread.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
    let p = libc::sched_param { sched_priority: 1 };
    // Safety: pid 0 is the calling thread; `p` outlives the call.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) } != 0 {
        return Err(EngineError::Backend {
            engine: "realtime",
            reason: format!(
                "SCHED_FIFO refused ({}): realtime=1 needs CAP_SYS_NICE or an RLIMIT_RTPRIO \
                 of at least 1 (ulimit -r); run without realtime",
                std::io::Error::last_os_error()
            ),
        });
    }
    Ok(())
}

/// Sets the calling thread's I/O priority (ioprio_set(2)).
pub fn set_thread_ioprio(value: u16) -> Result<(), EngineError> {
    // Safety: a plain syscall with integer arguments.
    let r = unsafe {
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0,
            libc::c_int::from(value),
        )
    };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        let (class, level, hint) = iolab_core::job::prio::ioprio_parts(value);
        return Err(EngineError::Backend {
            engine: "prio",
            reason: format!(
                "ioprio_set(class {class}, level {level}, hint {hint}) failed: {e} (class 1, \
                 realtime, needs CAP_SYS_ADMIN)"
            ),
        });
    }
    Ok(())
}

/// `nice`: adds `inc` to the calling thread's nice value, as fio's
/// nice(2) (on Linux a thread's own: the run's other threads keep theirs).
pub fn set_thread_nice(inc: i32) -> Result<(), EngineError> {
    // Safety: nice(2) changes only the calling thread's scheduling. It may
    // return -1 on success, so errno, cleared first, tells a failure.
    let failed = unsafe {
        *libc::__errno_location() = 0;
        libc::nice(inc) == -1 && *libc::__errno_location() != 0
    };
    if failed {
        let e = std::io::Error::last_os_error();
        return Err(EngineError::Backend {
            engine: "nice",
            reason: format!(
                "nice({inc}) failed: {e} (a negative nice needs CAP_SYS_NICE or a high \
                 enough ulimit -e)"
            ),
        });
    }
    Ok(())
}

/// The calling thread's I/O priority (ioprio_get(2)).
pub fn thread_ioprio() -> std::io::Result<u16> {
    // Safety: a plain syscall with integer arguments.
    let r = unsafe { libc::syscall(libc::SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(r as u16)
}

/// An I/O refused with EPERM that carried a realtime priority: say why
/// (the kernel's message alone names no cause).
pub fn explain_denied(mut e: EngineError, ioprio: u16) -> EngineError {
    if let EngineError::IoFailed { source, .. } = &mut e {
        if source.raw_os_error() == Some(libc::EPERM) && ioprio >> 13 == 1 {
            let (_, level, _) = iolab_core::job::prio::ioprio_parts(ioprio);
            *source = std::io::Error::new(
                source.kind(),
                format!(
                    "{source}: the I/O's priority is realtime (class 1, level {level}), which \
                     needs CAP_SYS_ADMIN; run as root or use cmdprio_class=2"
                ),
            );
        }
    }
    e
}

/// What a worker needs to give each I/O its priority.
#[derive(Debug, Clone)]
pub struct PrioPicker {
    opts: PrioOptions,
    /// The job's own priority (0: none).
    default: u16,
    /// Draw per I/O (cmdprio options given).
    per_command: bool,
    /// The engine passes the priority with each request (io_uring, libaio).
    in_request: bool,
    state: u64,
}

impl PrioPicker {
    /// None when the job sets no priority at all.
    pub fn new(job: &PreparedJob, seed: u64) -> Option<PrioPicker> {
        let opts = job.prio.clone();
        let default = opts.job_ioprio();
        let per_command = opts.per_command();
        if default.is_none() && !per_command {
            return None;
        }
        Some(PrioPicker {
            per_command,
            default: default.unwrap_or(0),
            opts,
            in_request: job.ioengine.caps().per_io_prio,
            state: seed | 1,
        })
    }

    pub fn job_ioprio(&self) -> Option<u16> {
        (self.default != 0).then_some(self.default)
    }

    /// Per-priority latency is kept when I/Os differ in priority.
    pub fn per_command(&self) -> bool {
        self.per_command
    }

    /// The priority of the next I/O of `dir` and `len` bytes.
    #[inline]
    pub fn pick(&mut self, dir: usize, len: u64) -> u16 {
        if !self.per_command {
            return self.default;
        }
        // xorshift64: cheap, and uniform enough for a percentage.
        let mut x = self.state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.state = x;
        let roll = (((x >> 32) * 100) >> 32) as u32;
        self.opts.choose(dir, len, roll)
    }

    /// What the request carries: io_uring and libaio pass the priority
    /// with it (io_uring always, as fio); the other engines rely on the
    /// thread's priority set with ioprio_set.
    #[inline]
    pub fn request_ioprio(&self, ioprio: u16) -> u16 {
        if self.in_request {
            ioprio
        } else {
            0
        }
    }
}

/// Adds one completion's clat to its priority's histogram (a short list:
/// a job has a handful of priorities at most).
#[inline]
pub fn record_prio(d: &mut DirStats, ioprio: u16, clat_ns: u64) {
    match d.prios.iter_mut().find(|p| p.ioprio == ioprio) {
        Some(p) => p.clat_ns.record(clat_ns),
        None => {
            let mut h = LatHist::new();
            h.record(clat_ns);
            d.prios.push(PrioStat { ioprio, clat_ns: h });
            d.prios.sort_by_key(|p| p.ioprio);
        }
    }
}

impl<B: Backend> Worker<B> {
    /// The priority of unit `u` (0 when the job sets none).
    #[inline]
    pub(super) fn pick_prio(&mut self, u: &IoUnit) -> u16 {
        match self.prio.as_mut() {
            Some(p) => p.pick(u.dir.option_slot(), u.len),
            None => 0,
        }
    }

    /// Per-priority latency and the per-I/O record of a completed slot
    /// (only jobs that ask for them come here).
    pub(super) fn per_io(&mut self, s: &Slot, ts: u64) {
        let Some(start) = self.rec.measured_start_ns() else {
            return; // ramp: nothing is kept
        };
        let submit = if B::SYNC {
            s.times.issue_ns
        } else {
            s.times.submit_ns
        };
        let clat = ts.saturating_sub(submit);
        if self.prio.as_ref().is_some_and(|p| p.per_command()) {
            record_prio(&mut self.rec.dirs[s.dir as usize], s.ioprio, clat);
        }
        if let Some(log) = self.iolog.as_mut() {
            log.record(&super::iolog::IoRecord {
                time_ns: ts.saturating_sub(start),
                slat_ns: submit.saturating_sub(s.times.issue_ns),
                clat_ns: clat,
                offset: s.offset,
                len: s.len,
                ioprio: s.ioprio,
                dir: s.dir as u8,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_realtime_io_says_what_it_needs() {
        let e = crate::worker::io_failed("f".into(), 0, 4096, "read", -i64::from(libc::EPERM));
        let got = explain_denied(e, iolab_core::job::prio::ioprio_value(1, 0, 0)).to_string();
        assert!(got.contains("needs CAP_SYS_ADMIN"), "{got}");
        let e = crate::worker::io_failed("f".into(), 0, 4096, "read", -i64::from(libc::EPERM));
        let got = explain_denied(e, iolab_core::job::prio::ioprio_value(2, 0, 0)).to_string();
        assert!(!got.contains("CAP_SYS_ADMIN"), "{got}");
    }

    #[test]
    fn realtime_puts_the_thread_under_sched_fifo_with_1ns_slack() {
        std::thread::spawn(|| match set_thread_realtime() {
            Ok(()) => {
                // Safety: plain queries of the calling thread.
                let (policy, slack) = unsafe {
                    (
                        libc::sched_getscheduler(0),
                        libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0),
                    )
                };
                // (Linux ≥ 6.7 gives real-time threads no slack at all.)
                assert_eq!(policy, libc::SCHED_FIFO);
                assert!((0..=1).contains(&slack), "timer slack {slack} ns");
                // A thread it starts inherits the class.
                // Safety: a plain query of the calling thread.
                let child = std::thread::spawn(|| unsafe { libc::sched_getscheduler(0) });
                assert_eq!(child.join().unwrap(), libc::SCHED_FIFO);
            }
            Err(e) => assert!(e.to_string().contains("CAP_SYS_NICE"), "{e}"),
        })
        .join()
        .unwrap();
    }

    #[test]
    fn thread_priority_is_set_and_read_back() {
        let v = iolab_core::job::prio::ioprio_value(3, 0, 0);
        std::thread::spawn(move || {
            set_thread_ioprio(v).unwrap();
            assert_eq!(thread_ioprio().unwrap(), v);
            let be5 = iolab_core::job::prio::ioprio_value(2, 5, 0);
            set_thread_ioprio(be5).unwrap();
            assert_eq!(thread_ioprio().unwrap(), be5);
        })
        .join()
        .unwrap();
    }
}
