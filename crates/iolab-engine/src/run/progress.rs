//! Live progress from the workers' messages: the latest interval of every
//! worker of the running group, merged (histograms exactly), plus how far
//! the group is (by time for time-based jobs, by bytes for size-based ones),
//! and every job's running totals since the start (measured intervals only,
//! ramp left out, as in the result): what `--metrics` exports as counters.

use iolab_core::hist::LatHist;
use iolab_core::job::PreparedJob;
use iolab_core::stats::IntervalSample;

use super::coordinator::CoordState;
use super::{JobProgress, JobTotals, Progress};
use crate::worker::clock::now_ns;
use crate::worker::{WorkerId, WorkerMsg};

#[derive(Debug, Default)]
struct WorkerView {
    last: Option<Box<IntervalSample>>,
    last_ramp: bool,
    bytes_done: u64,
    measuring_since_ns: Option<u64>,
    finished: bool,
}

/// Per-worker view, indexed by job then clone.
#[derive(Debug)]
pub struct Tracker {
    /// First flat index of each job's workers.
    job_base: Vec<usize>,
    job_group: Vec<u32>,
    views: Vec<WorkerView>,
    /// Bytes each worker will move (size-based), None when unknown.
    planned_bytes: Vec<Option<u64>>,
    /// Every job's measured totals so far, indexed by job.
    totals: Vec<JobTotals>,
}

impl Tracker {
    pub fn new(jobs: &[PreparedJob], groups: &[u32], planned_bytes: Vec<Option<u64>>) -> Tracker {
        let mut job_base = Vec::with_capacity(jobs.len());
        let mut n = 0;
        for j in jobs {
            job_base.push(n);
            n += j.workers() as usize;
        }
        let views = (0..n).map(|_| WorkerView::default()).collect();
        Tracker {
            job_base,
            job_group: groups.to_vec(),
            views,
            planned_bytes,
            totals: (0..jobs.len() as u32)
                .map(|job| JobTotals {
                    job,
                    ..Default::default()
                })
                .collect(),
        }
    }

    fn view(&mut self, id: WorkerId) -> &mut WorkerView {
        &mut self.views[self.job_base[id.job as usize] + id.worker as usize]
    }

    /// Take one message in; true if it was a new interval or an end.
    pub fn apply(&mut self, msg: WorkerMsg) -> bool {
        match msg {
            WorkerMsg::Measuring { id, mono_ns } => {
                self.view(id).measuring_since_ns = Some(mono_ns);
                false
            }
            WorkerMsg::Interval { id, sample, ramp } => {
                if !ramp {
                    self.totals[id.job as usize].add(&sample);
                }
                let v = self.view(id);
                v.bytes_done += sample.dirs.iter().map(|d| d.bytes).sum::<u64>();
                v.last = Some(sample);
                v.last_ramp = ramp;
                true
            }
            WorkerMsg::Finished { id } => {
                self.view(id).finished = true;
                true
            }
        }
    }

    /// Earliest start of a measured window among the workers of `group`.
    pub fn measured_start_ns(&self, group: u32) -> Option<u64> {
        self.flat_of_group(group)
            .filter_map(|i| self.views[i].measuring_since_ns)
            .min()
    }

    fn flat_of_group(&self, group: u32) -> impl Iterator<Item = usize> + '_ {
        let total = self.views.len();
        (0..self.job_base.len())
            .filter(move |&j| self.job_group[j] == group)
            .flat_map(move |j| {
                let end = self.job_base.get(j + 1).copied().unwrap_or(total);
                self.job_base[j]..end
            })
    }

    pub fn progress(
        &self,
        jobs: &[PreparedJob],
        groups: u32,
        st: CoordState,
        started: bool,
    ) -> Progress {
        let mut p = Progress {
            group: st.group,
            groups,
            ..Default::default()
        };
        let now = now_ns();
        let members: Vec<usize> = self.flat_of_group(st.group).collect();
        p.phase = if st.done {
            "done"
        } else if !started || now < st.group_start_ns {
            "waiting"
        } else if members
            .iter()
            .all(|&i| self.views[i].measuring_since_ns.is_some() || self.views[i].finished)
        {
            "running"
        } else {
            "ramp"
        }
        .to_string();
        p.elapsed_ns = if started {
            now.saturating_sub(st.group_start_ns)
        } else {
            0
        };
        self.fill_rates(&members, &mut p);
        self.fill_jobs(st.group, &mut p);
        self.fill_remaining(jobs, st.group, &members, &mut p);
        p.totals = self.totals.clone();
        p
    }

    fn fill_rates(&self, members: &[usize], p: &mut Progress) {
        let mut lat = [LatHist::new(), LatHist::new(), LatHist::new()];
        for &i in members {
            let Some(s) = &self.views[i].last else {
                continue;
            };
            let secs = (s.end_ns.saturating_sub(s.start_ns)) as f64 / 1e9;
            for (d, (dir, h)) in s.dirs.iter().zip(lat.iter_mut()).enumerate() {
                if secs > 0.0 {
                    p.iops[d] += dir.ios as f64 / secs;
                    p.bw_bytes_per_s[d] += dir.bytes as f64 / secs;
                }
                h.merge(&dir.lat_ns.unpack());
            }
        }
        for (d, h) in lat.iter().enumerate() {
            p.p50_ns[d] = h.percentile(50.0);
            p.p99_ns[d] = h.percentile(99.0);
        }
        p.lat_ns = lat;
    }

    /// Each job of `group`: its workers' last intervals merged.
    fn fill_jobs(&self, group: u32, p: &mut Progress) {
        let total = self.views.len();
        for j in (0..self.job_base.len()).filter(|&j| self.job_group[j] == group) {
            let end = self.job_base.get(j + 1).copied().unwrap_or(total);
            let members: Vec<usize> = (self.job_base[j]..end).collect();
            let mut jp = Progress::default();
            self.fill_rates(&members, &mut jp);
            p.jobs.push(JobProgress {
                job: j as u32,
                iops: jp.iops,
                bw_bytes_per_s: jp.bw_bytes_per_s,
                lat_ns: jp.lat_ns,
                finished: members.iter().all(|&i| self.views[i].finished),
            });
        }
    }

    fn fill_remaining(
        &self,
        jobs: &[PreparedJob],
        group: u32,
        members: &[usize],
        p: &mut Progress,
    ) {
        let in_group: Vec<&PreparedJob> = jobs
            .iter()
            .zip(&self.job_group)
            .filter(|(_, &g)| g == group)
            .map(|(j, _)| j)
            .collect();
        if !in_group.is_empty() && in_group.iter().all(|j| j.time_based) {
            let total = in_group
                .iter()
                .map(|j| j.startdelay_ns + j.ramp_time_ns + j.runtime_ns.unwrap_or(0))
                .max()
                .unwrap_or(0);
            p.remaining_ns = Some(total.saturating_sub(p.elapsed_ns));
            if total > 0 {
                p.fraction = Some((p.elapsed_ns as f64 / total as f64).min(1.0));
            }
            return;
        }
        let planned: Option<u64> = members.iter().map(|&i| self.planned_bytes[i]).sum();
        if let Some(total) = planned.filter(|&t| t > 0) {
            let done: u64 = members.iter().map(|&i| self.views[i].bytes_done).sum();
            p.fraction = Some((done as f64 / total as f64).min(1.0));
        }
    }
}

impl JobTotals {
    fn add(&mut self, s: &IntervalSample) {
        for (d, dir) in s.dirs.iter().enumerate() {
            self.ios[d] += dir.ios;
            self.bytes[d] += dir.bytes;
            self.lat_ns[d].merge(&dir.lat_ns.unpack());
        }
    }
}
