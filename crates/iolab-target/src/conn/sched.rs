//! How the serving threads are scheduled: timer slack and, on request,
//! a real-time class.
//!
//! Every thread that writes replies (the connection's reader, its workers,
//! its timer) runs with 1 ns of timer slack: the default 50 µs lets the
//! kernel fire a timed wake-up that much late to batch it with others.
//! With `[server] realtime` (`iolab target --realtime`) they also run under
//! `SCHED_FIFO` at [`RT_PRIORITY`]: a busy machine's ordinary threads can
//! then no longer keep a due reply waiting for a time slice (measured in
//! docs/performance.md, "Reply timing under load"). The server asks for
//! the class once when it starts ([`check_realtime`]) and refuses to start
//! with one line when the host refuses it, so the option is never silently
//! ignored. The timer's busy wait is bounded (conn/reply.rs), and Linux
//! keeps 5 % of each CPU for ordinary threads whatever real-time threads do.

use std::io;
use std::num::NonZeroU64;

/// The real-time priority asked for: the lowest, above every ordinary thread.
pub(crate) const RT_PRIORITY: i32 = 1;

/// Set the calling thread's timer slack to 1 ns and, with `realtime`, put
/// it under `SCHED_FIFO`.
pub(crate) fn tune_current(realtime: bool) -> io::Result<()> {
    rustix::thread::set_current_timer_slack(NonZeroU64::new(1))?;
    if realtime {
        set_fifo(RT_PRIORITY)?;
    }
    Ok(())
}

fn set_fifo(priority: i32) -> io::Result<()> {
    let p = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: pid 0 is the calling thread; `p` outlives the call.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Whether this process may run threads under `SCHED_FIFO`: tried on a
/// short-lived thread of its own, so no serving thread changes class.
pub(crate) fn check_realtime() -> Result<(), String> {
    let probe = std::thread::Builder::new()
        .name("nbd-rt-probe".into())
        .spawn(|| set_fifo(RT_PRIORITY))
        .map_err(|e| format!("could not start a thread to try SCHED_FIFO: {e}"))?;
    match probe.join() {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(format!(
            "SCHED_FIFO refused ({e}): it needs CAP_SYS_NICE or an RLIMIT_RTPRIO of at least \
             {RT_PRIORITY} (ulimit -r); run without realtime"
        )),
        Err(_) => Err("the SCHED_FIFO probe thread panicked".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_agrees_with_setting_the_class() {
        // Whatever this host allows, the probe and a real thread agree, and
        // a refusal says what is needed.
        let probe = check_realtime();
        let real = std::thread::spawn(|| tune_current(true)).join().unwrap();
        assert_eq!(probe.is_ok(), real.is_ok(), "{probe:?} vs {real:?}");
        if let Err(m) = probe {
            assert!(m.contains("CAP_SYS_NICE"), "{m}");
        }
        std::thread::spawn(|| tune_current(false).unwrap())
            .join()
            .unwrap();
    }
}
