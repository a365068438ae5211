//! Interim results: the run's result so far, in the same [`RunResult`]
//! form as the final one (fio's `--status-interval`: a full report of
//! cumulative values since the start, every so often).
//!
//! When asked before the start ([`Cumulative::sender`] handed to every
//! worker), each worker sends its result so far at each measured interval
//! it closes and its final result when it ends (worker/record.rs): the
//! measured window up to that instant, ramp left out, every histogram
//! (slat, clat, lat) exact, its CPU time so far. [`Cumulative::result`]
//! assembles the latest of each worker as the run's result is assembled;
//! a worker that has not measured anything yet (ramping, or in a later
//! stonewall group) is there with nothing done. So an interim report is
//! at most one interval (`RunConfig::interval`) behind the wall clock, its
//! rates are over the time its I/Os ran, and it holds no time series and
//! no per-group CPU window (those are measured at a group's end).

use std::sync::mpsc::{self, Receiver, Sender};

use iolab_core::stats::{RunResult, WorkerResult};

use super::coordinator::CoordOut;
use super::{setup, RunConfig};
use crate::worker::{CumulativeMsg, WorkerId, WorkerOutcome};

/// The latest result so far of every worker, by job then clone.
#[derive(Debug)]
pub struct Cumulative {
    tx: Sender<CumulativeMsg>,
    rx: Receiver<CumulativeMsg>,
    latest: Vec<Vec<Option<WorkerResult>>>,
}

impl Cumulative {
    pub fn new(cfg: &RunConfig) -> Cumulative {
        let (tx, rx) = mpsc::channel();
        let latest = cfg
            .jobs
            .iter()
            .map(|j| vec![None; j.workers() as usize])
            .collect();
        Cumulative { tx, rx, latest }
    }

    /// What each worker sends its result so far to.
    pub fn sender(&self) -> Sender<CumulativeMsg> {
        self.tx.clone()
    }

    /// Keep the latest of what the workers sent (each poll does, so at
    /// most an interval's worth waits in the channel).
    pub fn take(&mut self) {
        while let Ok((id, r)) = self.rx.try_recv() {
            if let Some(slot) = self
                .latest
                .get_mut(id.job as usize)
                .and_then(|w| w.get_mut(id.worker as usize))
            {
                *slot = Some(*r);
            }
        }
    }

    /// The run's result so far, assembled as the final one is.
    pub fn result(
        &mut self,
        cfg: &RunConfig,
        groups: &[u32],
        notes: Vec<String>,
        start_unix_ns: u64,
    ) -> RunResult {
        self.take();
        let mut out = CoordOut::default();
        for (job, workers) in self.latest.iter().enumerate() {
            for (worker, r) in workers.iter().enumerate() {
                let id = WorkerId {
                    job: job as u32,
                    worker: worker as u32,
                };
                let mut result = r.clone().unwrap_or_default();
                result.worker = id.worker;
                result.host = cfg.host.clone();
                let outcome = WorkerOutcome {
                    result,
                    error: None,
                };
                out.outcomes.push((id, outcome));
            }
        }
        setup::assemble(cfg, groups, notes, out, start_unix_ns).result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_core::job::JobSpec;

    #[test]
    fn a_worker_not_heard_from_is_there_with_nothing_done_and_the_latest_wins() {
        let job = JobSpec::new("t")
            .args(["ioengine=null", "size=4m", "numjobs=2"])
            .prepare()
            .unwrap();
        let cfg = RunConfig {
            jobs: vec![job],
            interval: std::time::Duration::from_secs(1),
            allow_overwrite: false,
            host: "h".into(),
            host_index: 0,
        };
        let mut c = Cumulative::new(&cfg);
        let tx = c.sender();
        let id = WorkerId { job: 0, worker: 1 };
        for ios in [10, 25] {
            let mut r = WorkerResult {
                runtime_ns: ios * 1_000,
                ..Default::default()
            };
            r.dirs[0].ios = ios;
            tx.send((id, Box::new(r))).unwrap();
        }
        let result = c.result(&cfg, &[0], vec![], 7);
        let w = &result.jobs[0].workers;
        assert_eq!(w.len(), 2);
        assert_eq!((w[0].worker, w[0].dirs[0].ios), (0, 0));
        assert_eq!((w[1].worker, w[1].dirs[0].ios), (1, 25));
        assert_eq!(w[1].host, "h");
        assert_eq!(result.start_unix_ns, 7);
    }
}
