//! Seed 003's labs on a virtual clock: a closed-loop client (fio's
//! `iodepth` requests always outstanding) drives a built stack — the
//! simulated 6-drive RAID 5 under the controller cache — in virtual time,
//! with no sockets and no waiting, so the figures are the model's own and
//! free of the machine's scheduling noise. The same stack served by the
//! target and measured by a real client adds only the client's and the
//! socket's time (docs/raid-lab.md).
//!
//! Events: a request is issued with [`IoCtx::starting_at`] its arrival;
//! its completion is its hold, or its tickets' decision, found by polling
//! them at the instants they ask for (which moves the simulated disks'
//! own clocks forward, in order). The next request of the slot arrives at
//! the completion plus `rtt` (the client's and the socket's share).

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::sample::Sampler;
use super::ticket::{Due, Tickets};
use super::{BlockDev, IoCtx};
use crate::config::parse_compact;
use crate::error::TargetError;
use crate::server_config::ServerConfig;

/// A job: fio's rw (read/write, sequential or random), bs and iodepth.
#[derive(Debug, Clone, Copy)]
pub struct VJob {
    pub write: bool,
    pub random: bool,
    pub bs: u64,
    pub iodepth: usize,
    /// Bytes of the device the job covers from offset 0 (sequential jobs wrap).
    pub region: u64,
    /// Virtual time to run.
    pub runtime: Duration,
    /// Client and socket time added to every request.
    pub rtt: Duration,
}

/// What a virtual run measured.
#[derive(Debug, Clone, Copy)]
pub struct VResult {
    pub ios: u64,
    pub bytes: u64,
    pub elapsed: Duration,
}

impl VResult {
    pub fn iops(&self) -> f64 {
        self.ios as f64 / self.elapsed.as_secs_f64()
    }

    pub fn mib_per_s(&self) -> f64 {
        self.bytes as f64 / self.elapsed.as_secs_f64() / (1u64 << 20) as f64
    }
}

struct Slot {
    floor: Option<Instant>,
    tickets: Tickets,
    done: Option<Instant>,
}

/// Run `job` against `dev` on a virtual clock.
pub fn run_virtual(dev: &Arc<dyn BlockDev>, job: VJob, seed: u64) -> VResult {
    let rng = Sampler::new(seed);
    let blocks = (job.region / job.bs).max(1);
    let mut next_block = 0u64;
    let mut buf = vec![0x5au8; job.bs as usize];
    // Start an hour ahead of the wall clock: every virtual instant stays in
    // the future (however slow this machine computes), so the devices'
    // decisions wait for our polls and no wall time leaks into the figures.
    let t0 = Instant::now() + Duration::from_secs(3600);
    let end = t0 + job.runtime;
    let mut issue = |at: Instant, buf: &mut Vec<u8>| -> Slot {
        let block = if job.random {
            rng.next_u64() % blocks
        } else {
            let b = next_block % blocks;
            next_block += 1;
            b
        };
        let mut c = IoCtx::starting_at(Some(at));
        let r = if job.write {
            dev.write_at(&mut c, buf, block * job.bs, false)
        } else {
            dev.read_at(&mut c, buf, block * job.bs)
        };
        r.expect("virtual lab request failed");
        Slot {
            floor: c.hold_until(),
            tickets: c.take_tickets(),
            done: None,
        }
    };
    let mut slots: Vec<Slot> = (0..job.iodepth).map(|_| issue(t0, &mut buf)).collect();
    let (mut now, mut res) = (
        t0,
        VResult {
            ios: 0,
            bytes: 0,
            elapsed: Duration::ZERO,
        },
    );
    while now < end {
        let mut next: Option<(Instant, Option<usize>)> = None;
        for (i, s) in slots.iter_mut().enumerate() {
            if s.done.is_none() {
                match s.tickets.poll(s.floor, now) {
                    Due::At(t) => s.done = Some(t.max(s.floor.unwrap_or(t))),
                    Due::Recheck(r) => {
                        if next.is_none_or(|(n, _)| r < n) {
                            next = Some((r, None));
                        }
                    }
                }
            }
            if let Some(t) = s.done {
                if next.is_none_or(|(n, _)| t < n) {
                    next = Some((t, Some(i)));
                }
            }
        }
        let (t, slot) = next.expect("a request is always outstanding");
        now = now.max(t);
        if let Some(i) = slot {
            res.ios += 1;
            res.bytes += job.bs;
            slots[i] = issue(now + job.rtt, &mut buf);
        }
    }
    res.elapsed = now - t0;
    res
}

/// Build the export of the compact `spec` (`NAME=BACKEND,…+LAYER,…`) and
/// run `job` on it on a virtual clock: the model's own figures (`iolab lab
/// raid` prints them beside the measured ones).
pub fn model(spec: &str, job: VJob, seed: u64) -> Result<VResult, TargetError> {
    let server = ServerConfig::new(
        "127.0.0.1:0"
            .parse()
            .map_err(|m: String| TargetError::config("listen", m))?,
    );
    let t = parse_compact(&[spec], server)?;
    let dev = t
        .exports
        .get(0)
        .map(|e| e.dev().clone())
        .ok_or_else(|| TargetError::config("export", "the spec made no export"))?;
    if job.bs == 0 || job.iodepth == 0 || job.bs > dev.caps().size_bytes {
        return Err(TargetError::config(
            "job",
            "bs and iodepth must be > 0 and bs within the export",
        ));
    }
    Ok(run_virtual(&dev, job, seed))
}

#[cfg(test)]
#[path = "raid_lab_tests.rs"]
mod tests;
