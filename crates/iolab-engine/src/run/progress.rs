//! Live progress from the workers' messages: the latest interval of every
//! worker of the running group, merged (histograms exactly), plus how far
//! the group is (by time for time-based jobs, by bytes for size-based ones),
//! and every job's running totals since the start (measured intervals only,
//! ramp left out, as in the result): what `--metrics` exports as counters.

use iolab_core::hist::{LatHist, PackedHist};
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
                let joined = match v.last.as_deref() {
                    Some(prev) if v.last_ramp == ramp && is_stub_after(prev, &sample) => {
                        Some(Box::new(joined(prev, &sample)))
                    }
                    _ => None,
                };
                v.last = Some(joined.unwrap_or(sample));
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

/// A worker's last interval is cut short where its run ends: a stub of a
/// few I/Os (one slow one, as like as not) whose rate and percentiles say
/// nothing of the run, yet it is what the live line and `--metrics` show
/// last. A stub shorter than half the interval before it, and straight
/// after it, is therefore shown joined to it: the rate over the time both
/// ran, their histograms merged exactly.
fn is_stub_after(prev: &IntervalSample, next: &IntervalSample) -> bool {
    let len = |s: &IntervalSample| s.end_ns.saturating_sub(s.start_ns);
    next.start_ns == prev.end_ns && len(next) < len(prev) / 2
}

fn joined(prev: &IntervalSample, next: &IntervalSample) -> IntervalSample {
    let mut out = prev.clone();
    out.end_ns = next.end_ns;
    for (d, n) in out.dirs.iter_mut().zip(&next.dirs) {
        d.ios += n.ios;
        d.bytes += n.bytes;
        let mut h = d.lat_ns.unpack();
        h.merge(&n.lat_ns.unpack());
        d.lat_ns = PackedHist::pack(&h);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_core::stats::DirInterval;

    fn sample(start_ns: u64, end_ns: u64, ios: u64, lat_ns: u64) -> Box<IntervalSample> {
        let mut h = LatHist::new();
        for _ in 0..ios {
            h.record(lat_ns);
        }
        let read = DirInterval {
            ios,
            bytes: ios * 4096,
            lat_ns: PackedHist::pack(&h),
        };
        Box::new(IntervalSample {
            start_ns,
            end_ns,
            dirs: [read, DirInterval::default(), DirInterval::default()],
        })
    }

    fn tracker() -> Tracker {
        let job = iolab_core::job::JobSpec::new("t")
            .args(["filename=/tmp/x", "size=4m", "rw=randread", "bs=4k"])
            .prepare()
            .unwrap();
        Tracker::new(&[job], &[0], vec![None])
    }

    fn interval(t: &mut Tracker, s: Box<IntervalSample>) {
        let id = WorkerId { job: 0, worker: 0 };
        t.apply(WorkerMsg::Interval {
            id,
            sample: s,
            ramp: false,
        });
    }

    #[test]
    fn a_stub_at_the_end_is_shown_joined_to_the_interval_before_it() {
        let mut t = tracker();
        interval(&mut t, sample(0, 1_000_000_000, 1_000_000, 40));
        // The run ends 0.1 ms later with one I/O that took 300 us.
        interval(&mut t, sample(1_000_000_000, 1_000_100_000, 1, 300_000));
        let mut p = Progress::default();
        t.fill_rates(&[0], &mut p);
        let secs = 1.0001;
        assert!(
            (p.iops[0] - 1_000_001.0 / secs).abs() < 1.0,
            "{}",
            p.iops[0]
        );
        assert!(p.p50_ns[0] < 1_000, "{}", p.p50_ns[0]);
        // Counts at both ends: the totals still hold every I/O once.
        assert_eq!(t.totals[0].ios[0], 1_000_001);
    }

    #[test]
    fn a_full_interval_replaces_the_one_before() {
        let mut t = tracker();
        interval(&mut t, sample(0, 1_000_000_000, 1_000, 40));
        interval(&mut t, sample(1_000_000_000, 2_000_000_000, 10, 300_000));
        let mut p = Progress::default();
        t.fill_rates(&[0], &mut p);
        assert!((p.iops[0] - 10.0).abs() < 1e-9, "{}", p.iops[0]);
        assert!(p.p50_ns[0] > 100_000, "{}", p.p50_ns[0]);
    }
}
