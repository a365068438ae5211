//! A run's intervals streamed into an interval log as they arrive
//! ([`IntervalStream`]): each job's workers merged interval by interval
//! (exactly, as [`super::merge_series`] merges a finished series) and
//! written as soon as every worker of the job has reported that interval
//! or finished; each worker's own intervals as well when asked
//! (`per_worker`, as fio keeps per-job logs only when asked).
//!
//! Memory: per job, the intervals not yet complete (a worker ahead of its
//! siblings by a poll or two) and a counter per worker — nothing that grows
//! with the run's length. A pending interval keeps the workers' packed
//! (compressed) histograms that have arrived, a few hundred bytes each, and
//! they are merged when the interval is written, into one set of live
//! histograms (~225 KiB a direction) the stream reuses: a worker that
//! stalls for many intervals (a loaded host, short intervals) costs its
//! siblings' packed histograms, not a live set per interval.

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
    /// Per direction, the workers' histograms of this interval so far.
    lat: Vec<Vec<PackedHist>>,
    reported: u32,
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
    /// Intervals `written..` not yet complete, in order.
    pending: VecDeque<Pending>,
    written: u64,
    ended: bool,
}

/// Streams a run's intervals into an interval log (see the module docs).
#[allow(missing_debug_implementations)]
pub struct IntervalStream<W: Write> {
    log: HlogWriter<W>,
    per_worker: bool,
    jobs: Vec<JobState>,
    /// One live histogram per direction: where an interval's workers are
    /// merged when it is written (reused).
    merged: Vec<LatHist>,
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
                pending: VecDeque::new(),
                written: 0,
                ended: j.workers == 0,
            })
            .collect();
        Ok(IntervalStream {
            log,
            per_worker,
            jobs,
            merged: IoDir::MEASURED.iter().map(|_| LatHist::new()).collect(),
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
        let k = (i - j.written) as usize;
        while j.pending.len() <= k {
            let lat = IoDir::MEASURED.iter().map(|_| Vec::new()).collect();
            j.pending.push_back(Pending {
                sample: IntervalSample {
                    start_ns: u64::MAX,
                    ..Default::default()
                },
                lat,
                reported: 0,
            });
        }
        let p = &mut j.pending[k];
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
        while let Some(p) = j.pending.front() {
            let i = j.written;
            let done_before = j
                .next
                .iter()
                .zip(&j.finished)
                .filter(|&(&n, &f)| f && n <= i)
                .count() as u32;
            if p.reported + done_before < j.next.len() as u32 {
                break;
            }
            let mut p = j.pending.pop_front().expect("front exists");
            for ((d, parts), h) in p.sample.dirs.iter_mut().zip(&p.lat).zip(&mut self.merged) {
                h.reset();
                for part in parts {
                    h.merge(&part.unpack());
                }
                d.lat_ns = PackedHist::pack(h);
            }
            let src = HlogSource { job, worker: None };
            self.log
                .interval(src, &j.tags, i, j.offset_ns.unwrap_or(0), &p.sample)?;
            j.written += 1;
        }
        if !j.ended && j.pending.is_empty() && j.finished.iter().all(|&f| f) {
            j.ended = true;
            self.log.job_end(job, j.written)?;
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
        self.jobs.iter().map(|j| j.pending.len()).sum()
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
