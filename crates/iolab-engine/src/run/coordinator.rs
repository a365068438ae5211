//! The coordinator thread: runs stonewall groups one after another.
//!
//! For each group it releases every worker at the group's start instant
//! (the caller's `at` for the first group, "now" for the next ones), takes
//! a CPU sample when the group's measured window begins (start + the
//! longest startdelay + ramp_time of its jobs) and another when its last
//! worker has ended: that window is the group's CPU accounting, recorded
//! with this host's name and the group's index. After a stop request or an
//! error, later groups are not started (and have no CPU entry).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use iolab_core::cpu::{self, CpuSample, CpuUsage};

use crate::worker::clock::now_ns;
use crate::worker::{Control, WorkerHandle, WorkerId, WorkerOutcome};

/// Where the run is, shared with `Run::poll`.
#[derive(Debug, Clone, Copy, Default)]
pub struct CoordState {
    /// Group now running (or last run).
    pub group: u32,
    /// CLOCK_MONOTONIC instant the group starts (may be in the future).
    pub group_start_ns: u64,
    pub done: bool,
}

/// One group to run: its workers and the lead time before measuring.
#[derive(Debug)]
pub struct GroupPlan {
    pub workers: Vec<WorkerHandle>,
    /// Longest startdelay + ramp_time of the group's jobs, ns.
    pub lead_ns: u64,
}

/// What the coordinator hands back.
#[derive(Debug, Default)]
pub struct CoordOut {
    pub outcomes: Vec<(WorkerId, WorkerOutcome)>,
    pub cpu: Vec<CpuUsage>,
    /// Problems with CPU accounting (kept as notes, not failures).
    pub notes: Vec<String>,
}

/// Runs the groups; `host` names this host in the CPU accounting.
pub fn coordinate(
    groups: Vec<GroupPlan>,
    first_start_ns: u64,
    host: &str,
    ctl: Arc<Control>,
    state: Arc<Mutex<CoordState>>,
) -> CoordOut {
    let mut out = CoordOut::default();
    let mut failed = false;
    for (g, plan) in groups.into_iter().enumerate() {
        if g > 0 && (failed || ctl.stop.load(Ordering::Relaxed)) {
            // Never started: joining closes their go channel and they end.
            for h in plan.workers {
                let id = h.id;
                out.outcomes.push((id, h.join()));
            }
            continue;
        }
        // exitall with exit_what=group/stonewall ended the previous group only.
        ctl.end_group.store(false, Ordering::Relaxed);
        let start = if g == 0 { first_start_ns } else { now_ns() };
        set_state(&state, |s| {
            s.group = g as u32;
            s.group_start_ns = start;
        });
        for h in &plan.workers {
            h.go(start);
        }
        wait_for_measuring(&plan.workers, start + plan.lead_ns);
        let cpu0 = cpu_sample(&mut out.notes);
        for h in plan.workers {
            let id = h.id;
            let o = h.join();
            failed |= o.error.is_some();
            out.outcomes.push((id, o));
        }
        let cpu1 = cpu_sample(&mut out.notes);
        let usage = match (cpu0, cpu1) {
            (Some(a), Some(b)) => CpuUsage::between(&a, &b),
            _ => CpuUsage::default(),
        };
        out.cpu.push(CpuUsage {
            host: host.to_string(),
            group: g as u32,
            ..usage
        });
    }
    set_state(&state, |s| s.done = true);
    out
}

fn set_state(state: &Mutex<CoordState>, f: impl FnOnce(&mut CoordState)) {
    // A poisoned lock only means a poller panicked; the state is plain data.
    let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
    f(&mut s);
}

/// Sleep until the measured window begins, or until every worker ended.
fn wait_for_measuring(workers: &[WorkerHandle], at_ns: u64) {
    loop {
        let now = now_ns();
        if now >= at_ns || workers.iter().all(WorkerHandle::is_finished) {
            return;
        }
        std::thread::sleep(Duration::from_nanos((at_ns - now).min(1_000_000)));
    }
}

fn cpu_sample(notes: &mut Vec<String>) -> Option<CpuSample> {
    match cpu::sample() {
        Ok(s) => Some(s),
        Err(e) => {
            notes.push(format!("cpu accounting unavailable: {e}"));
            None
        }
    }
}
