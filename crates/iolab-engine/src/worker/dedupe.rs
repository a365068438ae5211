//! Which content a write carries when `dedupe_percentage` is set: fio's
//! dedupe modes (its HOWTO and dedupe.c, in iolab's own terms).
//!
//! Every write is either *unique* (the next page of the worker's unique
//! stream: page `j` is built from seed `page_seed(key, j)`) or, with
//! probability `dedupe_percentage`, a *duplicate*:
//!
//! - `repeat`: the last unique page again, so the share of duplicates
//!   holds at every moment of the run;
//! - `working_set`: a page drawn uniformly from the working set, the first
//!   `dedupe_working_set_percentage` % of the region's blocks of the unique
//!   stream; the share converges as the run goes (fio's words);
//! - `dedupe_global` (working set only): the working set is spread evenly
//!   over the unique streams of every worker that sets it — the first
//!   `pages / n` pages of each — so one file's duplicates repeat another
//!   file's blocks. Those workers key their unique streams by their place
//!   among the participants, so each can name the others' pages.
//!
//! Pages are named by seed: equal seeds build equal buffers of one size
//! (`Content::fill`), with or without `buffer_compress_percentage`.

use iolab_core::gen::mix64;
use iolab_core::job::{DedupeMode, PreparedJob};

/// Key of the unique streams of `dedupe_global` participants.
const GLOBAL_KEY: u64 = 0xd3d0_9e61_0ba1_5eed;

/// Who a worker is to the dedupe streams: its job's index in the run
/// (two jobs with one `randseed` would otherwise write the same unique
/// pages) and its place among `dedupe_global` workers (index, count).
#[derive(Debug, Clone, Copy)]
pub struct DedupePeer {
    pub job: u64,
    pub global: Option<(u64, u64)>,
}

/// The [`DedupePeer`] of worker `worker` of job `job` (run order).
pub fn peer(jobs: &[PreparedJob], job: usize, worker: u32) -> DedupePeer {
    DedupePeer {
        job: job as u64,
        global: global_peer(jobs, job, worker),
    }
}

fn global_peer(jobs: &[PreparedJob], job: usize, worker: u32) -> Option<(u64, u64)> {
    let joins = |j: &PreparedJob| {
        j.data.dedupe_global
            && j.data.dedupe_pct > 0
            && j.data.dedupe_mode == DedupeMode::WorkingSet
    };
    if !joins(&jobs[job]) {
        return None;
    }
    let before: u64 = jobs[..job]
        .iter()
        .filter(|j| joins(j))
        .map(|j| u64::from(j.workers()))
        .sum();
    let all: u64 = jobs
        .iter()
        .filter(|j| joins(j))
        .map(|j| u64::from(j.workers()))
        .sum();
    Some((before + u64::from(worker), all))
}

fn page_seed(key: u64, page: u64) -> u64 {
    mix64(key ^ mix64(page.wrapping_add(1))) | 1
}

#[derive(Debug)]
pub struct Dedupe {
    pct: u64,
    mode: DedupeMode,
    /// Key of this worker's unique stream.
    key: u64,
    /// Unique pages written so far.
    unique: u64,
    last: Option<u64>,
    ws_pages: u64,
    /// (index, count) among dedupe_global participants.
    peer: Option<(u64, u64)>,
}

impl Dedupe {
    /// `seed`: the worker's content seed; `region_bytes`: bytes of one pass
    /// (the working set is a share of it); `peer`: see [`global_peer`].
    pub fn new(job: &PreparedJob, seed: u64, region_bytes: u64, who: DedupePeer) -> Option<Dedupe> {
        let peer = who.global;
        let d = &job.data;
        if d.dedupe_pct == 0 {
            return None;
        }
        let block = job.bs[1].min().max(1);
        let ws_pages = (region_bytes * u64::from(d.dedupe_working_set_pct) / 100 / block).max(1);
        let key = match peer {
            Some((index, _)) => mix64(GLOBAL_KEY ^ mix64(index)),
            None => mix64(seed ^ mix64(who.job ^ 0x00de_d09e)),
        };
        Some(Dedupe {
            pct: u64::from(d.dedupe_pct),
            mode: d.dedupe_mode,
            key,
            unique: 0,
            last: None,
            ws_pages,
            peer,
        })
    }

    /// Seed of the next write's page; `r1`, `r2` are fresh random draws.
    pub fn next_seed(&mut self, r1: u64, r2: u64) -> u64 {
        let dup = r1 % 100 < self.pct;
        match (dup, self.mode, self.last) {
            (true, DedupeMode::Repeat, Some(last)) => return last,
            (true, DedupeMode::WorkingSet, _) => return self.working_set_page(r2 % self.ws_pages),
            _ => {}
        }
        let seed = page_seed(self.key, self.unique);
        self.unique += 1;
        self.last = Some(seed);
        seed
    }

    /// Seed of page `i` of the working set.
    fn working_set_page(&self, i: u64) -> u64 {
        match self.peer {
            None => page_seed(self.key, i),
            Some((index, n)) => {
                let per = (self.ws_pages / n).max(1);
                let owner = (index + i / per) % n;
                page_seed(mix64(GLOBAL_KEY ^ mix64(owner)), i % per)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn job(opts: &[&str]) -> PreparedJob {
        iolab_core::job::JobSpec::new("t")
            .args(["filename=/tmp/x", "size=4m", "rw=write", "bs=4k"])
            .args(opts.iter().copied())
            .prepare()
            .unwrap()
    }

    fn alone() -> DedupePeer {
        DedupePeer {
            job: 0,
            global: None,
        }
    }

    #[test]
    fn repeat_repeats_the_last_unique_page_and_working_set_draws_from_the_first() {
        let mut x = 7u64;
        let mut draw = || {
            x = mix64(x);
            x
        };
        for (opts, ws_pages) in [
            (&["dedupe_percentage=40"][..], 51),
            (
                &[
                    "dedupe_percentage=40",
                    "dedupe_mode=working_set",
                    "dedupe_working_set_percentage=10",
                ][..],
                102,
            ),
        ] {
            let mut d = Dedupe::new(&job(opts), 1, 4 << 20, alone()).unwrap();
            assert_eq!(d.ws_pages, ws_pages, "{opts:?}");
            let ws: HashSet<u64> = (0..ws_pages).map(|i| page_seed(d.key, i)).collect();
            let mut dups = 0;
            for _ in 0..10_000 {
                let before = d.unique;
                let s = d.next_seed(draw(), draw());
                if d.unique == before + 1 {
                    assert_eq!(
                        s,
                        page_seed(d.key, before),
                        "a unique write is the next page"
                    );
                    continue;
                }
                dups += 1;
                match d.mode {
                    DedupeMode::Repeat => assert_eq!(s, page_seed(d.key, before - 1)),
                    DedupeMode::WorkingSet => assert!(ws.contains(&s)),
                }
            }
            // Binomial(10000, 0.4): sd 0.5 points; 2 points is 4 sd.
            assert!(
                (dups as f64 / 10_000.0 - 0.4).abs() < 0.02,
                "{opts:?}: {dups}"
            );
        }
    }

    #[test]
    fn global_working_sets_are_spread_over_every_participant() {
        let j = job(&[
            "dedupe_percentage=100",
            "dedupe_mode=working_set",
            "dedupe_global=1",
        ]);
        let mut a = Dedupe::new(
            &j,
            1,
            4 << 20,
            DedupePeer {
                job: 0,
                global: Some((0, 2)),
            },
        )
        .unwrap();
        let b = Dedupe::new(
            &j,
            2,
            4 << 20,
            DedupePeer {
                job: 1,
                global: Some((1, 2)),
            },
        )
        .unwrap();
        let pages = a.ws_pages;
        let from_b: HashSet<u64> = (0..pages / 2).map(|i| page_seed(b.key, i)).collect();
        let from_a: HashSet<u64> = (0..pages / 2).map(|i| page_seed(a.key, i)).collect();
        let seeds: Vec<u64> = (0..2000u64).map(|i| a.next_seed(0, mix64(i))).collect();
        let in_b = seeds.iter().filter(|s| from_b.contains(s)).count();
        let in_a = seeds.iter().filter(|s| from_a.contains(s)).count();
        assert_eq!(
            in_a + in_b,
            2000,
            "every duplicate is an early page of a or b"
        );
        assert!(
            (800..1200).contains(&in_b),
            "half from the other worker: {in_b}"
        );
    }
}
