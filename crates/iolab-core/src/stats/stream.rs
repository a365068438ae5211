//! A run's intervals streamed into an interval log as they arrive
//! ([`IntervalStream`]): each job's workers merged interval by interval
//! (exactly, as [`super::merge_series`] merges a finished series) and
//! written as soon as every worker of the job has reported that interval
//! or finished; each worker's own intervals as well when asked
//! (`per_worker`, as fio keeps per-job logs only when asked).
//!
//! Memory: per job, the intervals not yet complete (a worker ahead of its
//! siblings by a poll or two) and a counter per worker — nothing that grows
//! with the run's length. A pending interval holds its members' *packed*
//! histograms; they are merged when the interval is complete, into one set
//! of live histograms (~225 KiB a direction) the stream reuses: a member
//! that stalls for many intervals (a loaded host, short intervals) costs
//! its siblings' packed histograms, not a live set per interval.

use std::collections::VecDeque;
use std::io::{self, Write};

use super::hlog::{hlog_tag, HlogSource, HlogWriter};
use super::IntervalSample;
use crate::hist::{LatHist, PackedHist};
use crate::job::IoDir;

/// One job as the stream sees it.
#[derive(Debug, Clone)]
pub struct StreamJob {
    pub name: String,
    /// Workers (numjobs clones).
    pub workers: u32,
}

#[derive(Debug)]
struct Pending {
    sample: IntervalSample,
    /// Per direction, the members' histograms of this interval so far.
    lat: Vec<Vec<PackedHist>>,
    reported: u32,
}

/// Intervals of several members (a job's workers here; a stonewall group's
/// jobs in `summary::streamed`) merged by index as they arrive — counts
/// added over the merged interval (earliest start to latest end),
/// histograms merged exactly — each complete once every member has
/// reported it or ended before it. The one interval fold of a stream.
#[derive(Debug, Default)]
pub struct IntervalMerge {
    /// Intervals `first..` not yet complete, in order.
    pending: VecDeque<Pending>,
    first: u64,
}

/// The live histograms (one per direction) a complete interval's packed
/// parts are merged into: one set, reused across merges and streams.
pub type SpareHists = Vec<LatHist>;

impl IntervalMerge {
    /// Add a member's interval `i`; false when `i` was already complete
    /// (a member reporting an interval twice, or after its end).
    pub fn add(&mut self, i: u64, s: &IntervalSample) -> bool {
        let Some(k) = i.checked_sub(self.first) else {
            return false;
        };
        while self.pending.len() <= k as usize {
            let lat = IoDir::MEASURED.iter().map(|_| Vec::new()).collect();
            self.pending.push_back(Pending {
                sample: IntervalSample {
                    start_ns: u64::MAX,
                    ..Default::default()
                },
                lat,
                reported: 0,
            });
        }
        let p = &mut self.pending[k as usize];
        p.sample.start_ns = p.sample.start_ns.min(s.start_ns);
        p.sample.end_ns = p.sample.end_ns.max(s.end_ns);
        for ((t, d), parts) in p.sample.dirs.iter_mut().zip(&s.dirs).zip(&mut p.lat) {
            t.ios += d.ios;
            t.bytes += d.bytes;
            if !d.lat_ns.is_empty() {
                parts.push(d.lat_ns.clone());
            }
        }
        p.reported += 1;
        true
    }

    /// The next interval (its index and the merge) once `members` have
    /// reported it or ended before it (`ended_before(i)`: members that
    /// ended with at most `i` intervals).
    pub fn pop_complete(
        &mut self,
        members: u32,
        ended_before: impl Fn(u64) -> u32,
        spare: &mut SpareHists,
    ) -> Option<(u64, IntervalSample)> {
        let p = self.pending.front()?;
        if p.reported + ended_before(self.first) < members {
            return None;
        }
        let mut p = self.pending.pop_front()?;
        if spare.is_empty() {
            spare.extend(IoDir::MEASURED.iter().map(|_| LatHist::new()));
        }
        for ((d, parts), h) in p.sample.dirs.iter_mut().zip(&p.lat).zip(spare.iter_mut()) {
            h.reset();
            for part in parts {
                h.merge(&part.unpack());
            }
            d.lat_ns = PackedHist::pack(h);
        }
        self.first += 1;
        Some((self.first - 1, p.sample))
    }

    /// Intervals completed so far (the next one's index).
    pub fn completed(&self) -> u64 {
        self.first
    }

    /// Intervals held, not yet complete.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }
}

#[derive(Debug)]
struct JobState {
    tags: Vec<String>,
    worker_tags: Vec<Vec<String>>,
    /// Next interval index of each worker, and whether it has finished.
    next: Vec<u64>,
    finished: Vec<bool>,
    /// Measured start of the job (its first worker's), ns after the base.
    offset_ns: Option<u64>,
    merge: IntervalMerge,
    ended: bool,
}

/// Streams a run's intervals into an interval log (see the module docs).
#[allow(missing_debug_implementations)]
pub struct IntervalStream<W: Write> {
    log: HlogWriter<W>,
    per_worker: bool,
    jobs: Vec<JobState>,
    /// Where a complete interval's histograms are merged (reused).
    spare: SpareHists,
}

fn dir_tags(name: &str, host: &str, worker: Option<u32>) -> Vec<String> {
    IoDir::MEASURED
        .iter()
        .map(|&d| hlog_tag(name, host, worker, d))
        .collect()
}

impl<W: Write> IntervalStream<W> {
    /// A stream into `log` (its header written); names the jobs in it.
    pub fn new(
        mut log: HlogWriter<W>,
        jobs: &[StreamJob],
        host: &str,
        per_worker: bool,
    ) -> io::Result<Self> {
        for (i, j) in jobs.iter().enumerate() {
            log.job(i as u32, j.workers, &j.name)?;
        }
        let jobs = jobs
            .iter()
            .map(|j| JobState {
                tags: dir_tags(&j.name, host, None),
                worker_tags: match per_worker {
                    true => (0..j.workers)
                        .map(|w| dir_tags(&j.name, host, Some(w)))
                        .collect(),
                    false => Vec::new(),
                },
                next: vec![0; j.workers as usize],
                finished: vec![false; j.workers as usize],
                offset_ns: None,
                merge: IntervalMerge::default(),
                ended: j.workers == 0,
            })
            .collect();
        Ok(IntervalStream {
            log,
            per_worker,
            jobs,
            spare: Vec::new(),
        })
    }

    /// Worker `worker` of job `job` began its measured window `offset_ns`
    /// after the log's base time.
    pub fn measuring(&mut self, job: u32, offset_ns: u64) {
        let j = &mut self.jobs[job as usize];
        j.offset_ns = Some(j.offset_ns.map_or(offset_ns, |o| o.min(offset_ns)));
    }

    /// One measured interval of a worker (in its order).
    pub fn interval(&mut self, job: u32, worker: u32, s: &IntervalSample) -> io::Result<()> {
        let j = &mut self.jobs[job as usize];
        let offset_ns = j.offset_ns.unwrap_or(0);
        let w = worker as usize;
        let i = j.next[w];
        j.next[w] += 1;
        if self.per_worker {
            let src = HlogSource {
                job,
                worker: Some(worker),
            };
            self.log.interval(src, &j.worker_tags[w], i, offset_ns, s)?;
        }
        if !j.merge.add(i, s) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("job {job} worker {worker}: interval {i} after the job's was written"),
            ));
        }
        self.write_complete(job)
    }

    /// Worker `worker` of job `job` has finished (after its last interval).
    pub fn finished(&mut self, job: u32, worker: u32) -> io::Result<()> {
        self.jobs[job as usize].finished[worker as usize] = true;
        self.write_complete(job)
    }

    /// Write job `job`'s intervals that every worker has reported or
    /// finished before; its end once all have finished.
    fn write_complete(&mut self, job: u32) -> io::Result<()> {
        let j = &mut self.jobs[job as usize];
        let (next, finished) = (&j.next, &j.finished);
        let ended_before = |i: u64| {
            next.iter()
                .zip(finished)
                .filter(|&(&n, &f)| f && n <= i)
                .count() as u32
        };
        while let Some((i, sample)) =
            j.merge
                .pop_complete(next.len() as u32, ended_before, &mut self.spare)
        {
            let src = HlogSource { job, worker: None };
            self.log
                .interval(src, &j.tags, i, j.offset_ns.unwrap_or(0), &sample)?;
        }
        if !j.ended && j.merge.pending() == 0 && j.finished.iter().all(|&f| f) {
            j.ended = true;
            self.log.job_end(job, j.merge.completed())?;
        }
        Ok(())
    }

    /// Make what was written so far durable against the process's end
    /// (the writer's buffer to the file).
    pub fn flush(&mut self) -> io::Result<()> {
        self.log.flush()
    }

    /// Intervals held waiting for a sibling worker, over all jobs.
    pub fn pending(&self) -> usize {
        self.jobs.iter().map(|j| j.merge.pending()).sum()
    }

    pub fn into_log(self) -> HlogWriter<W> {
        self.log
    }
}

/// Stream a finished result's embedded intervals into `log` as a run
/// would have (each worker's interval `i` in turn, then each worker's
/// end), and return the result as a streaming run writes it: the workers'
/// series empty, `interval_log` naming `file`. For results written before
/// runs streamed (and to check that both forms give the same figures).
pub fn stream_result<W: Write>(
    run: &super::RunResult,
    log: HlogWriter<W>,
    file: &str,
    per_worker: bool,
) -> io::Result<super::RunResult> {
    let host = run.hosts.first().map_or("", |h| h.hostname.as_str());
    let specs: Vec<StreamJob> = run
        .jobs
        .iter()
        .map(|j| StreamJob {
            name: j.name.clone(),
            workers: j.workers.len() as u32,
        })
        .collect();
    let mut stream = IntervalStream::new(log, &specs, host, per_worker)?;
    for (ji, j) in run.jobs.iter().enumerate() {
        stream.measuring(ji as u32, 0);
        let longest = j.workers.iter().map(|w| w.series.len()).max().unwrap_or(0);
        for i in 0..longest {
            for (wi, w) in j.workers.iter().enumerate() {
                if let Some(s) = w.series.get(i) {
                    stream.interval(ji as u32, wi as u32, s)?;
                }
            }
        }
        for wi in 0..j.workers.len() {
            stream.finished(ji as u32, wi as u32)?;
        }
    }
    stream.flush()?;
    let mut out = run.clone();
    out.jobs
        .iter_mut()
        .flat_map(|j| j.workers.iter_mut())
        .for_each(|w| w.series.clear());
    out.interval_log = Some(super::IntervalLogRef {
        file: file.to_string(),
        per_worker,
    });
    Ok(out)
}
