//! Recording what a worker did: per-direction totals and histograms over
//! the measured window, the interval time series, the ramp, and the
//! thread's CPU time.
//!
//! Time line of one worker (all CLOCK_MONOTONIC ns):
//! `origin` (I/O starts, after startdelay) → `ramp_end = origin + ramp_time`
//! → measured window → end. Everything recorded before the ramp ends is
//! thrown away when it ends (fio's ramp_time); the measured window starts at
//! the first clock reading at or past `ramp_end`. Intervals are a fixed grid
//! from the start of the measured window (during the ramp, from `origin`,
//! sent as progress only); an interval the worker slept through is sent
//! empty, so every worker's series has the same index for the same time.
//!
//! Per-direction runtime (fio's rule, backend.c `update_runtime`): the
//! measured window is cut into phases — the I/O phase (the loop, its drain
//! and end_fsync) and, for do_verify, the verify phase ([`Recorder::end_phase`]
//! closes one) — and each direction's runtime is the sum of the phases in
//! which it completed or failed an I/O. A mix's directions both get the
//! whole window; a verify job's write gets the write phase and its read
//! the verify phase (plus the write phase with verify_backlog).
//!
//! Nothing here allocates or locks per I/O: completions add to counters and
//! record into pre-allocated [`HotHist`]s (branch-free, no bounds check);
//! once per interval those are drained, exactly, into the interval's and
//! the window's [`LatHist`]s and a sample goes to the run over a channel.
//! A completion's total latency is recorded once: the interval's histogram
//! and the window's both come from the same drain.

use std::sync::mpsc::Sender;

use iolab_core::cpu::thread_rusage;
use iolab_core::hist::{HotHist, LatHist, PackedHist};
use iolab_core::job::IoDir;
use iolab_core::stats::{DirInterval, DirStats, IntervalSample, WorkerResult};

use super::{CumulativeMsg, WorkerId, WorkerMsg};

/// Timestamps of one in-flight I/O, ns.
#[derive(Debug, Clone, Copy, Default)]
pub struct IoTimes {
    /// Taken just before the batch was staged.
    pub issue_ns: u64,
    /// Taken just after the batch was committed (= issue for sync backends).
    pub submit_ns: u64,
    /// Intended issue time (rate-limited jobs only).
    pub due_ns: u64,
}

#[derive(Debug)]
pub struct Recorder {
    id: WorkerId,
    tx: Sender<WorkerMsg>,
    rate_limited: bool,
    pub dirs: [DirStats; 3],
    pub syncs: u64,
    pub sync_lat_ns: LatHist,
    iv: [DirInterval; 3],
    /// Live latency histograms of the current interval; packed into `iv`
    /// when the interval closes.
    iv_lat_ns: [LatHist; 3],
    /// Per-I/O records since the last drain, per direction: submission,
    /// completion and total latency.
    hot_slat: [HotHist; 3],
    hot_clat: [HotHist; 3],
    hot_lat: [HotHist; 3],
    series: Vec<IntervalSample>,
    /// Keep the measured intervals for the result (false: the run streams
    /// them to an interval log as they arrive, so memory does not grow with
    /// the run's length and the result's `series` stay empty).
    keep_series: bool,
    /// Where the result so far goes at each measured interval (interim
    /// reports, `Run::snapshot`); None: nobody asked.
    cumulative: Option<Sender<CumulativeMsg>>,
    interval_ns: u64,
    ramp_end_ns: u64,
    /// Start of the measured window; `None` during the ramp.
    measured_start_ns: Option<u64>,
    /// Start of the current interval, and the next grid boundary.
    iv_start_ns: u64,
    iv_next_ns: u64,
    /// Grid origin of the interval series (origin during ramp, then measured start).
    grid_ns: u64,
    cpu0: (u64, u64, u64),
    /// Start of the current phase (measured part), I/Os done per direction
    /// when it began, and the runtime per direction of the phases closed.
    phase_start_ns: u64,
    phase_done: [u64; 3],
    dir_runtime_ns: [u64; 3],
}

fn dir_stats(rate_limited: bool) -> DirStats {
    DirStats {
        lat_intended_ns: rate_limited.then(LatHist::new),
        ..Default::default()
    }
}

impl Recorder {
    pub fn new(
        id: WorkerId,
        tx: Sender<WorkerMsg>,
        rate_limited: bool,
        interval_ns: u64,
    ) -> Recorder {
        Recorder {
            id,
            tx,
            rate_limited,
            dirs: [(); 3].map(|_| dir_stats(rate_limited)),
            syncs: 0,
            sync_lat_ns: LatHist::new(),
            iv: Default::default(),
            iv_lat_ns: [(); 3].map(|_| LatHist::new()),
            hot_slat: Default::default(),
            hot_clat: Default::default(),
            hot_lat: Default::default(),
            series: Vec::new(),
            keep_series: true,
            cumulative: None,
            interval_ns: interval_ns.max(1),
            ramp_end_ns: 0,
            measured_start_ns: None,
            iv_start_ns: 0,
            iv_next_ns: u64::MAX,
            grid_ns: 0,
            cpu0: (0, 0, 0),
            phase_start_ns: 0,
            phase_done: [0; 3],
            dir_runtime_ns: [0; 3],
        }
    }

    /// Whether the measured intervals stay in the result ([`Recorder::keep_series`]).
    pub fn keep_series(mut self, keep: bool) -> Recorder {
        self.keep_series = keep;
        self
    }

    /// Send the result so far to `to` at each measured interval.
    pub fn cumulative(mut self, to: Option<Sender<CumulativeMsg>>) -> Recorder {
        self.cumulative = to;
        self
    }

    /// I/O starts at `origin_ns`; the measured window at `origin + ramp`.
    pub fn begin(&mut self, origin_ns: u64, ramp_ns: u64) {
        self.ramp_end_ns = origin_ns + ramp_ns;
        self.grid_ns = origin_ns;
        self.iv_start_ns = origin_ns;
        if ramp_ns == 0 {
            self.start_measured(origin_ns);
        } else {
            self.iv_next_ns = self.next_boundary(origin_ns);
        }
    }

    pub fn measured_start_ns(&self) -> Option<u64> {
        self.measured_start_ns
    }

    /// Submission latency of `n` I/Os of `dir` staged and committed together.
    #[inline]
    pub fn submitted(&mut self, dir: usize, n: u64, slat_ns: u64) {
        if n > 0 {
            self.hot_slat[dir].record_n(slat_ns, n);
        }
    }

    /// One I/O of `bytes` completed, seen at `reap_ns`.
    #[inline(always)]
    pub fn completed(
        &mut self,
        dir: IoDir,
        bytes: u64,
        t: &IoTimes,
        reap_ns: u64,
        submit_stage: bool,
    ) {
        let d = &mut self.dirs[dir as usize];
        let lat = reap_ns.saturating_sub(t.issue_ns);
        d.ios += 1;
        d.bytes += bytes;
        // Without a submit stage clat = lat; the select is a conditional move.
        let from = if submit_stage {
            t.submit_ns
        } else {
            t.issue_ns
        };
        self.hot_clat[dir as usize].record(reap_ns.saturating_sub(from));
        self.hot_lat[dir as usize].record(lat);
        if let Some(h) = d.lat_intended_ns.as_mut() {
            h.record(reap_ns.saturating_sub(t.due_ns));
        }
        let iv = &mut self.iv[dir as usize];
        iv.ios += 1;
        iv.bytes += bytes;
    }

    /// Move the per-I/O records into the interval's and the window's
    /// histograms (exact; see `HotHist`).
    fn drain_hot(&mut self) {
        for (d, s) in self.dirs.iter_mut().enumerate() {
            self.hot_slat[d].drain_into(&mut [&mut s.slat_ns]);
            self.hot_clat[d].drain_into(&mut [&mut s.clat_ns]);
            self.hot_lat[d].drain_into(&mut [&mut s.lat_ns, &mut self.iv_lat_ns[d]]);
        }
    }

    pub fn errored(&mut self, dir: IoDir) {
        self.dirs[dir as usize].errors += 1;
    }

    pub fn synced(&mut self, lat_ns: u64) {
        self.syncs += 1;
        self.sync_lat_ns.record(lat_ns);
    }

    /// Called with every clock reading: ends the ramp and closes intervals.
    #[inline]
    pub fn tick(&mut self, now_ns: u64) {
        if now_ns >= self.iv_next_ns {
            self.tick_slow(now_ns);
        }
    }

    #[cold]
    fn tick_slow(&mut self, now_ns: u64) {
        while now_ns >= self.iv_next_ns {
            if self.measured_start_ns.is_none() && self.iv_next_ns >= self.ramp_end_ns {
                self.send_interval(self.ramp_end_ns, true);
                self.start_measured(now_ns);
                return;
            }
            let end = self.iv_next_ns;
            self.send_interval(end, self.measured_start_ns.is_none());
            self.iv_start_ns = end;
            self.iv_next_ns = self.next_boundary(end);
        }
    }

    /// The next interval boundary after `from`; during the ramp, the ramp's
    /// end is a boundary too.
    fn next_boundary(&self, from_ns: u64) -> u64 {
        let next = from_ns + self.interval_ns;
        match self.measured_start_ns {
            None => next.min(self.ramp_end_ns),
            Some(_) => next,
        }
    }

    fn start_measured(&mut self, now_ns: u64) {
        self.dirs = [(); 3].map(|_| dir_stats(self.rate_limited));
        self.syncs = 0;
        self.sync_lat_ns.reset();
        self.iv = Default::default();
        self.iv_lat_ns.iter_mut().for_each(LatHist::reset);
        let hot = self.hot_slat.iter_mut().chain(&mut self.hot_clat);
        hot.chain(&mut self.hot_lat).for_each(HotHist::reset);
        self.measured_start_ns = Some(now_ns);
        self.grid_ns = now_ns;
        self.iv_start_ns = now_ns;
        self.iv_next_ns = now_ns + self.interval_ns;
        self.cpu0 = thread_rusage();
        self.phase_start_ns = now_ns;
        self.phase_done = [0; 3];
        self.dir_runtime_ns = [0; 3];
        // The run may be gone (dropped without waiting); nothing to do then.
        let _ = self.tx.send(WorkerMsg::Measuring {
            id: self.id,
            mono_ns: now_ns,
        });
    }

    /// Start the measured window afresh at `now_ns` (the latency_target
    /// search's final window): what came before is not in the result.
    pub fn restart(&mut self, now_ns: u64) {
        if self.measured_start_ns.is_some() {
            self.series.clear();
            self.start_measured(now_ns);
        }
    }

    /// Close the current phase at `now_ns`: each direction that completed
    /// or failed an I/O in it ran for the phase's (measured) length.
    pub fn end_phase(&mut self, now_ns: u64) {
        if self.measured_start_ns.is_none() {
            return;
        }
        let len = now_ns.saturating_sub(self.phase_start_ns);
        for (d, s) in self.dirs.iter().enumerate() {
            let done = s.ios + s.errors;
            if done > self.phase_done[d] {
                self.dir_runtime_ns[d] += len;
                self.phase_done[d] = done;
            }
        }
        self.phase_start_ns = now_ns;
    }

    /// Close the current interval at `end_ns`: keep it (measured) and send it.
    fn send_interval(&mut self, end_ns: u64, ramp: bool) {
        self.drain_hot();
        let mut dirs = std::mem::take(&mut self.iv);
        for (d, h) in dirs.iter_mut().zip(self.iv_lat_ns.iter_mut()) {
            d.lat_ns = PackedHist::pack(h);
            h.reset();
        }
        let sample = IntervalSample {
            start_ns: self.iv_start_ns - self.grid_ns,
            end_ns: end_ns.max(self.iv_start_ns) - self.grid_ns,
            dirs,
        };
        if !ramp && self.keep_series {
            self.series.push(sample.clone());
        }
        if !ramp {
            self.send_cumulative(end_ns);
        }
        let _ = self.tx.send(WorkerMsg::Interval {
            id: self.id,
            sample: Box::new(sample),
            ramp,
        });
    }

    /// The result so far (measured window up to `end_ns`, the histograms
    /// just drained) to whoever asked for it: the same fields as
    /// [`Recorder::finish`] gives, the open phase counted up to `end_ns`.
    fn send_cumulative(&self, end_ns: u64) {
        let (Some(to), Some(start)) = (&self.cumulative, self.measured_start_ns) else {
            return;
        };
        let mut dirs = self.dirs.clone();
        for (d, s) in dirs.iter_mut().enumerate() {
            let open = s.ios + s.errors > self.phase_done[d];
            let now = if open {
                end_ns.saturating_sub(self.phase_start_ns)
            } else {
                0
            };
            s.runtime_ns = Some(self.dir_runtime_ns[d] + now);
        }
        let (usr_cpu_ns, sys_cpu_ns, ctx_switches) = self.cpu_so_far();
        let so_far = WorkerResult {
            worker: self.id.worker,
            runtime_ns: end_ns.saturating_sub(start),
            dirs,
            syncs: self.syncs,
            sync_lat_ns: self.sync_lat_ns.clone(),
            usr_cpu_ns,
            sys_cpu_ns,
            ctx_switches,
            ..Default::default()
        };
        let _ = to.send((self.id, Box::new(so_far)));
    }

    /// The thread's user CPU, system CPU (ns) and context switches since
    /// the measured window began.
    fn cpu_so_far(&self) -> (u64, u64, u64) {
        let (u1, s1, c1) = thread_rusage();
        let (u0, s0, c0) = self.cpu0;
        (
            u1.saturating_sub(u0),
            s1.saturating_sub(s0),
            c1.saturating_sub(c0),
        )
    }

    /// Close the last (partial) interval at `end_ns` and build the result.
    pub fn finish(&mut self, end_ns: u64, worker: u32, host: String) -> WorkerResult {
        let Some(start) = self.measured_start_ns else {
            // Ended during the ramp (stopped, or size-based work done):
            // nothing was measured.
            let _ = self.tx.send(WorkerMsg::Interval {
                id: self.id,
                sample: Box::default(),
                ramp: true,
            });
            return WorkerResult {
                worker,
                host,
                ..Default::default()
            };
        };
        if end_ns > self.iv_start_ns || self.iv.iter().any(|d| d.ios > 0) {
            self.send_interval(end_ns, false);
        }
        self.drain_hot();
        self.end_phase(end_ns);
        for (d, rt) in self.dirs.iter_mut().zip(self.dir_runtime_ns) {
            d.runtime_ns = Some(rt);
        }
        let (usr_cpu_ns, sys_cpu_ns, ctx_switches) = self.cpu_so_far();
        WorkerResult {
            worker,
            host,
            runtime_ns: end_ns.saturating_sub(start),
            dirs: std::mem::take(&mut self.dirs),
            syncs: self.syncs,
            sync_lat_ns: std::mem::take(&mut self.sync_lat_ns),
            usr_cpu_ns,
            sys_cpu_ns,
            ctx_switches,
            series: std::mem::take(&mut self.series),
            // Filled in by the worker's error state (worker/errors.rs).
            total_err: 0,
            first_error: 0,
            latency_depth: None,
        }
    }
}
