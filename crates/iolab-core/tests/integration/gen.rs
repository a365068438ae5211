//! Tests of the per-worker I/O generator (`iolab_core::gen`): coverage,
//! exact bytes, loops, alignment, region bounds, read/write mix, seeds and
//! distributions. Jobs are written as fio options and prepared by the
//! option table, as a user's are; a few tests then set a field directly to
//! reach the generator's own checks with values `prepare` never produces.
//! Speed: `cargo run --release -p iolab-core --example gen_speed`.

use std::collections::HashMap;

use iolab_core::gen::{FileRegion, IoGen, IoUnit};
use iolab_core::job::{IoDir, JobSpec, PreparedJob, RandomDistribution, Zone};
use iolab_core::JobError;

const K: u64 = 1024;
const M: u64 = 1024 * K;

/// A job of fio's defaults (one worker, `rw=read`, `bs=4k`, one pass) on
/// one 1 MiB file, with the null engine, and `opts` on top. The regions a
/// test hands the generator decide where it does I/O, not `size`.
fn job(opts: &[&str]) -> PreparedJob {
    JobSpec::new("t")
        .args(["filename=/tmp/x", "size=1m", "ioengine=null"])
        .args(opts.iter().copied())
        .prepare()
        .unwrap_or_else(|e| panic!("{opts:?}: {e}"))
}

fn one(len: u64) -> Vec<FileRegion> {
    vec![FileRegion { start: 0, len }]
}

fn all(g: &mut IoGen) -> Vec<IoUnit> {
    g.by_ref().collect()
}

fn total(units: &[IoUnit]) -> u64 {
    units.iter().map(|u| u.len).sum()
}

/// Every `grain` block of each region is covered exactly once by `units`.
fn assert_each_block_once(units: &[IoUnit], regions: &[FileRegion], grain: u64) {
    let mut hits: HashMap<(u32, u64), u32> = HashMap::new();
    for u in units {
        assert_eq!(u.offset % grain, 0, "{u:?}");
        for b in 0..u.len / grain {
            *hits.entry((u.file, u.offset / grain + b)).or_default() += 1;
        }
    }
    for (f, r) in regions.iter().enumerate() {
        for b in r.start / grain..(r.start + r.len / grain * grain) / grain {
            assert_eq!(hits.remove(&(f as u32, b)), Some(1), "file {f} block {b}");
        }
    }
    assert!(hits.is_empty(), "blocks outside the regions: {hits:?}");
}

mod coverage {
    use super::*;

    #[test]
    fn random_fixed_bs_touches_every_block_once_for_many_sizes() {
        for nblocks in (1..=300).chain([1023, 1024, 1025, 4097, 65_537]) {
            let j = job(&["rw=randread"]);
            let regions = one(nblocks * 4 * K);
            let units = all(&mut IoGen::new(&j, 0, regions.clone()).unwrap());
            assert_eq!(units.len() as u64, nblocks);
            assert_each_block_once(&units, &regions, 4 * K);
        }
    }

    #[test]
    fn every_pass_is_a_new_permutation() {
        let j = job(&["rw=randread", "bs=512", "loops=3"]);
        let units = all(&mut IoGen::new(&j, 0, one(256 * 512)).unwrap());
        let passes: Vec<&[IoUnit]> = units.chunks(256).collect();
        assert_eq!(passes.len(), 3);
        for p in &passes {
            assert_each_block_once(p, &one(256 * 512), 512);
        }
        assert_ne!(passes[0], passes[1]);
        assert_ne!(passes[1], passes[2]);
    }

    #[test]
    fn random_order_looks_random() {
        let n = 1 << 14;
        let j = job(&["rw=randread"]);
        let units = all(&mut IoGen::new(&j, 0, one(n * 4 * K)).unwrap());
        let blocks: Vec<u64> = units.iter().map(|u| u.offset / (4 * K)).collect();
        let adjacent = blocks
            .windows(2)
            .filter(|w| w[0].abs_diff(w[1]) == 1)
            .count();
        assert!(
            adjacent < 20,
            "{adjacent} of {n} steps go to a neighbouring block"
        );
        // The first half of the pass falls on both halves of the region alike.
        let low = blocks[..(n / 2) as usize]
            .iter()
            .filter(|&&b| b < n / 2)
            .count() as f64;
        assert!(
            (low / (n / 2) as f64 - 0.5).abs() < 0.03,
            "low half share {}",
            low / (n / 2) as f64
        );
    }

    #[test]
    fn randrw_shares_one_map_between_directions() {
        let j = job(&["rw=randrw"]);
        let units = all(&mut IoGen::new(&j, 0, one(M)).unwrap());
        assert!(
            units.iter().any(|u| u.dir == IoDir::Write)
                && units.iter().any(|u| u.dir == IoDir::Read)
        );
        assert_each_block_once(&units, &one(M), 4 * K);
    }

    #[test]
    fn bsrange_random_map_covers_each_min_block_once() {
        let j = job(&["rw=randread", "bsrange=4k-64k"]);
        let regions = vec![
            FileRegion {
                start: 8 * K,
                len: M + 5 * K,
            },
            FileRegion {
                start: 0,
                len: 300 * K,
            },
        ];
        let units = all(&mut IoGen::new(&j, 0, regions.clone()).unwrap());
        assert_each_block_once(&units, &regions, 4 * K);
        assert!(units
            .iter()
            .all(|u| u.len % (4 * K) == 0 && u.len <= 64 * K));
        assert!(
            units.iter().any(|u| u.len > 4 * K),
            "sizes above the minimum occur"
        );
    }

    #[test]
    fn bssplit_random_map_covers_once_and_keeps_listed_sizes() {
        let j = job(&[
            "rw=randrw",
            "rwmixread=70",
            "bssplit=4k/50:16k/30:64k/20",
            "loops=2",
        ]);
        let mut g = IoGen::new(&j, 0, one(4 * M)).unwrap();
        let units = all(&mut g);
        let pass_ios = units.iter().scan(0, |acc, u| {
            *acc += u.len;
            Some(*acc)
        });
        let first = pass_ios.take_while(|&b| b <= 4 * M).count();
        assert_each_block_once(&units[..first], &one(4 * M), 4 * K);
        assert_each_block_once(&units[first..], &one(4 * M), 4 * K);
        assert!(
            units
                .iter()
                .all(|u| [4 * K, 16 * K, 64 * K].contains(&u.len)),
            "a cut keeps listed sizes"
        );
    }

    #[test]
    fn different_sizes_per_direction_share_the_map() {
        // Fixes a bug: prepare's default blockalign (12k for the writes)
        // made the generator refuse this job, which fio runs.
        let j = job(&["rw=randrw", "bs=4k,12k"]);
        let units = all(&mut IoGen::new(&j, 0, one(M)).unwrap());
        assert_each_block_once(&units, &one(M), 4 * K);
    }
}

mod bytes {
    use super::*;

    /// Every mode, `loops` passes each.
    fn cases(loops: u32) -> Vec<PreparedJob> {
        let loops = format!("loops={loops}");
        let mut v = Vec::new();
        for bs in ["bs=4k", "bsrange=4k-16k", "bssplit=4k/60:8k/30:128k/10"] {
            for rw in ["write", "rw", "read", "randwrite", "randrw", "randread"] {
                v.push(job(&[&format!("rw={rw}"), "rwmixread=60", bs, &loops]));
            }
            for random in [
                "norandommap",
                "random_distribution=zipf:1.1",
                "random_distribution=pareto:0.3",
                "random_distribution=normal:20",
                "random_distribution=zoned:90/50:10/50",
            ] {
                v.push(job(&["rw=randrw", bs, random, &loops]));
            }
        }
        v
    }

    #[test]
    fn size_based_moves_exactly_the_passes_bytes_in_every_mode() {
        // Regions not multiples of the sizes: rounded down to the grain (4k).
        let regions = vec![
            FileRegion {
                start: 0,
                len: 10 * K,
            },
            FileRegion {
                start: 3 * M,
                len: 2 * M + 3 * K,
            },
            FileRegion {
                start: 512,
                len: 777 * K + 100,
            },
        ];
        let pass = 8 * K + 2 * M + 776 * K;
        for loops in [1, 3] {
            for j in cases(loops) {
                let mut g = IoGen::new(&j, 0, regions.clone()).unwrap();
                assert_eq!(g.bytes_per_pass(), pass);
                assert_eq!(g.total_bytes(), Some(pass * u64::from(loops)));
                let units = all(&mut g);
                assert_eq!(
                    total(&units),
                    pass * u64::from(loops),
                    "{:?} {:?}",
                    j.rw,
                    j.bs[0]
                );
                assert!(g.next().is_none(), "stays done");
                for u in &units {
                    let r = regions[u.file as usize];
                    let end = r.start + r.len / (4 * K) * (4 * K);
                    assert!(
                        u.offset >= r.start && u.offset + u.len <= end,
                        "{u:?} outside {r:?}"
                    );
                    assert!(u.len > 0 && u.len % (4 * K) == 0, "{u:?}");
                }
            }
        }
    }

    #[test]
    fn like_fio_size_10k_bs_4k_reads_two_blocks() {
        let units = all(&mut IoGen::new(&job(&[]), 0, one(10 * K)).unwrap());
        let got: Vec<(u64, u64)> = units.iter().map(|u| (u.offset, u.len)).collect();
        assert_eq!(got, vec![(0, 4 * K), (4 * K, 4 * K)]);
    }

    #[test]
    fn like_fio_seq_bsrange_cuts_the_last_io_to_fit() {
        // fio 3.33: size=30k bsrange=4k-16k rw=read moves 28 KiB.
        let j = job(&["bsrange=4k-16k"]);
        let units = all(&mut IoGen::new(&j, 0, one(30 * K)).unwrap());
        assert_eq!(total(&units), 28 * K);
        let mut pos = 0;
        for u in &units {
            assert_eq!(u.offset, pos);
            pos += u.len;
        }
    }

    #[test]
    fn region_smaller_than_a_block_is_an_error() {
        let e = IoGen::new(&job(&["rw=randread", "bs=64k"]), 0, one(60 * K)).unwrap_err();
        assert!(
            matches!(&e, JobError::InvalidValue { option, .. } if option == "size"),
            "{e}"
        );
    }
}

mod sequential {
    use super::*;

    /// Offsets (KiB) of one pass over 32 KiB with bs=4k and `rw`.
    fn seq_offsets_kib(rw: &str) -> Vec<u64> {
        let units = all(&mut IoGen::new(&job(&[rw]), 0, one(32 * K)).unwrap());
        assert_eq!(
            total(&units),
            32 * K,
            "a pass still moves the region's length"
        );
        units.iter().map(|u| u.offset / K).collect()
    }

    #[test]
    fn offset_modifiers_give_fios_offsets() {
        // Each sequence is what fio 3.33 wrote to its write_iolog for the
        // same job (size=32k, bs=4k): holes forward, steps back, and its
        // wrapping (past the end → start; before the start → end + add).
        assert_eq!(job(&["rw=read:-8k"]).rw_seq_add_bytes, -8 * K as i64);
        assert_eq!(seq_offsets_kib("rw=read:-8k"), [0, 24, 20, 16, 12, 8, 4, 0]);
        assert_eq!(seq_offsets_kib("rw=write:4k"), [0, 8, 16, 24, 0, 8, 16, 24]);
        assert_eq!(
            seq_offsets_kib("rw=write:8k"),
            [0, 12, 24, 0, 12, 24, 0, 12]
        );
        assert_eq!(
            seq_offsets_kib("rw=read:-12k"),
            [0, 20, 12, 4, 20, 12, 4, 20]
        );
        assert_eq!(
            seq_offsets_kib("rw=write:12k"),
            [0, 16, 0, 16, 0, 16, 0, 16]
        );
    }

    #[test]
    fn offset_modifier_on_random_io_is_refused() {
        let e = JobSpec::new("t")
            .args(["size=1m", "ioengine=null", "rw=randread:8"])
            .prepare()
            .unwrap_err();
        assert!(e.to_string().contains("I/Os per random offset"), "{e}");
    }

    #[test]
    fn files_round_robin_one_io_each_like_fio() {
        // fio 3.33: size=40k nrfiles=3 bs=4k → 12k per file, x.0.0 x.0.1 x.0.2 in turn.
        let regions = vec![
            FileRegion {
                start: 0,
                len: 40 * K / 3
            };
            3
        ];
        let units = all(&mut IoGen::new(&job(&[]), 0, regions).unwrap());
        let got: Vec<(u32, u64)> = units.iter().map(|u| (u.file, u.offset / K)).collect();
        let want: Vec<(u32, u64)> = (0..3)
            .flat_map(|b| (0..3).map(move |f| (f, b * 4)))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn mixed_keeps_one_position_per_direction() {
        let j = job(&["rw=rw"]);
        let units = all(&mut IoGen::new(&j, 0, one(M)).unwrap());
        assert_eq!(total(&units), M);
        for d in IoDir::ALL {
            let offs: Vec<u64> = units
                .iter()
                .filter(|u| u.dir == d)
                .map(|u| u.offset)
                .collect();
            let want: Vec<u64> = (0..offs.len() as u64).map(|i| i * 4 * K).collect();
            assert_eq!(offs, want, "{d:?} goes up from the start");
        }
    }

    #[test]
    fn loops_repeat_the_region() {
        let j = job(&["loops=2"]);
        let units = all(&mut IoGen::new(
            &j,
            0,
            vec![FileRegion {
                start: 4096,
                len: 30 * K,
            }],
        )
        .unwrap());
        let offs: Vec<u64> = units.iter().map(|u| u.offset / K).collect();
        assert_eq!(
            offs,
            vec![4, 8, 12, 16, 20, 24, 28, 4, 8, 12, 16, 20, 24, 28]
        );
    }

    #[test]
    fn distribution_on_sequential_is_an_error() {
        // Set directly: prepare resets it, with a warning.
        let j = PreparedJob {
            random_distribution: RandomDistribution::Zipf(1.2),
            ..job(&[])
        };
        assert!(matches!(
            IoGen::new(&j, 0, one(M)),
            Err(JobError::Conflict(_))
        ));
    }
}

mod alignment {
    use super::*;

    #[test]
    fn norandommap_offsets_follow_blockalign_and_stay_inside() {
        for (bs, ba) in [
            (4 * K, 512),
            (4 * K, 4 * K),
            (8 * K, 3 * K),
            (4 * K, 64 * K),
        ] {
            let j = job(&[
                "rw=randrw",
                "norandommap",
                &format!("bsrange={bs}-{}", 4 * bs),
                &format!("blockalign={ba}"),
                "time_based",
                "runtime=1",
            ]);
            let region = FileRegion {
                start: 1 << 20,
                len: 200 * K,
            };
            let mut g = IoGen::new(&j, 0, vec![region]).unwrap();
            let mut unaligned_to_bs = 0;
            for _ in 0..20_000 {
                let u = g.next().unwrap();
                assert_eq!((u.offset - region.start) % ba, 0, "{u:?}");
                assert!(u.offset + u.len <= region.start + region.len, "{u:?}");
                unaligned_to_bs += usize::from(!(u.offset - region.start).is_multiple_of(bs));
            }
            if ba < bs {
                assert!(
                    unaligned_to_bs > 0,
                    "blockalign={ba} below bs={bs} uses finer offsets"
                );
            }
        }
    }

    #[test]
    fn random_map_offsets_are_block_multiples() {
        // Set directly: prepare turns the map off for any other blockalign.
        let j = PreparedJob {
            blockalign: [512, 512],
            ..job(&["rw=randread"])
        };
        let units = all(&mut IoGen::new(&j, 0, one(M)).unwrap());
        assert_each_block_once(&units, &one(M), 4 * K);
    }

    #[test]
    fn blockalign_the_map_cannot_honour_is_an_error() {
        let j = PreparedJob {
            blockalign: [8 * K, 8 * K],
            ..job(&["rw=randread"])
        };
        let e = IoGen::new(&j, 0, one(M)).unwrap_err();
        assert!(
            matches!(&e, JobError::Conflict(m) if m.contains("blockalign") && m.contains("norandommap")),
            "{e}"
        );
    }

    #[test]
    fn distribution_offsets_are_aligned_and_inside() {
        let j = job(&[
            "rw=randrw",
            "random_distribution=zipf:0.8",
            "blockalign=4k,8k",
            "bssplit=4k/50:32k/50",
            "time_based",
            "runtime=1",
        ]);
        let region = FileRegion {
            start: 0,
            len: 100 * K,
        };
        let mut g = IoGen::new(&j, 0, vec![region]).unwrap();
        for _ in 0..20_000 {
            let u = g.next().unwrap();
            let ba = if u.dir == IoDir::Read { 4 * K } else { 8 * K };
            assert_eq!(u.offset % ba, 0, "{u:?}");
            assert!(u.offset + u.len <= region.len, "{u:?}");
        }
    }
}

mod time_based {
    use super::*;

    #[test]
    fn never_ends_and_each_pass_covers_the_region() {
        let j = job(&["rw=randread", "time_based", "runtime=1"]);
        let mut g = IoGen::new(&j, 0, one(64 * K)).unwrap();
        assert_eq!(g.total_bytes(), None);
        for pass in 1..=5 {
            let units: Vec<IoUnit> = (0..16)
                .map(|_| g.next().expect("time based never ends"))
                .collect();
            assert_each_block_once(&units, &one(64 * K), 4 * K);
            assert_eq!(g.passes_started(), pass);
        }
    }

    #[test]
    fn sequential_wraps_to_the_start() {
        let j = job(&["time_based", "runtime=1"]);
        let mut g = IoGen::new(&j, 0, one(12 * K)).unwrap();
        let offs: Vec<u64> = (0..7).map(|_| g.next().unwrap().offset / K).collect();
        assert_eq!(offs, vec![0, 4, 8, 0, 4, 8, 0]);
    }

    #[test]
    fn loops_zero_is_an_error_only_when_size_based() {
        // Set directly: prepare refuses loops=0 itself.
        let j = PreparedJob {
            loops: 0,
            ..job(&[])
        };
        assert!(
            matches!(IoGen::new(&j, 0, one(M)), Err(JobError::InvalidValue { option, .. }) if option == "loops")
        );
        assert!(IoGen::new(
            &PreparedJob {
                time_based: true,
                ..j
            },
            0,
            one(M)
        )
        .is_ok());
    }
}

mod mix_and_seeds {
    use super::*;

    fn read_share(read_pct: u32, n: usize) -> f64 {
        let mix = format!("rwmixread={read_pct}");
        let j = job(&["rw=randrw", &mix, "time_based", "runtime=1"]);
        let mut g = IoGen::new(&j, 3, one(M)).unwrap();
        let reads = (0..n)
            .filter(|_| g.next().unwrap().dir == IoDir::Read)
            .count();
        reads as f64 / n as f64
    }

    #[test]
    fn rwmix_read_share_within_one_percent_over_100k() {
        for pct in [1, 10, 25, 50, 60, 70, 90, 99] {
            let share = read_share(pct, 100_000);
            assert!(
                (share * 100.0 - f64::from(pct)).abs() < 1.0,
                "rwmixread={pct}: {share}"
            );
        }
        assert_eq!(read_share(100, 100_000), 1.0);
        assert_eq!(read_share(0, 100_000), 0.0);
    }

    fn first(j: &PreparedJob, worker: u32, n: usize) -> Vec<IoUnit> {
        let mut g = IoGen::new(j, worker, one(64 * M)).unwrap();
        (0..n).map(|_| g.next().unwrap()).collect()
    }

    #[test]
    fn randrepeat_repeats_and_workers_differ() {
        let j = job(&["rw=randrw", "bsrange=4k-64k"]);
        assert_eq!(first(&j, 0, 1000), first(&j, 0, 1000));
        assert_ne!(first(&j, 0, 1000), first(&j, 1, 1000));
        let other_seed = job(&["rw=randrw", "bsrange=4k-64k", "randseed=99"]);
        assert_ne!(first(&j, 0, 1000), first(&other_seed, 0, 1000));
    }

    /// fio seeds a worker from randseed and its thread number (run-wide):
    /// a job's worker 0 after a 2-clone job is worker 2 of the run, and
    /// draws what that clone would. A fleet host's rank is mixed in unless
    /// randseed was written (then every host draws the same sequence).
    #[test]
    fn jobs_and_hosts_differ_unless_randseed_is_given() {
        let a = job(&["rw=randread", "numjobs=2"]);
        let b = PreparedJob {
            first_worker: 2,
            ..a.clone()
        };
        assert_ne!(first(&a, 0, 500), first(&b, 0, 500));
        assert_eq!(first(&a, 2, 500), first(&b, 0, 500));
        let host1 = PreparedJob {
            seed_host: 1,
            ..a.clone()
        };
        assert_ne!(first(&a, 0, 500), first(&host1, 0, 500));
        let fixed = job(&["rw=randread", "randseed=7"]);
        assert!(fixed.randseed_given && !a.randseed_given);
        let fixed_host1 = PreparedJob {
            seed_host: 1,
            ..fixed.clone()
        };
        assert_eq!(first(&fixed, 0, 500), first(&fixed_host1, 0, 500));
    }

    #[test]
    fn without_randrepeat_runs_differ_and_the_seed_is_told() {
        let j = job(&["rw=randrw", "randrepeat=0"]);
        let a = IoGen::new(&j, 0, one(M)).unwrap();
        let b = IoGen::new(&j, 0, one(M)).unwrap();
        assert_ne!(a.seed(), b.seed());
        assert_ne!(first(&j, 0, 100), first(&j, 0, 100));
    }
}

mod distributions {
    use super::*;

    const BLOCKS: u64 = 10_000;
    const DRAWS: usize = 400_000;

    /// Hits per block of `DRAWS` I/Os under `random_distribution=rd`.
    fn hits(rd: &str) -> Vec<u64> {
        let rd = format!("random_distribution={rd}");
        let j = job(&["rw=randread", &rd, "time_based", "runtime=1"]);
        let mut g = IoGen::new(&j, 0, one(BLOCKS * 4 * K)).unwrap();
        let mut h = vec![0u64; BLOCKS as usize];
        for _ in 0..DRAWS {
            h[(g.next().unwrap().offset / (4 * K)) as usize] += 1;
        }
        h
    }

    /// Share of all hits that the hottest `frac` of the blocks got.
    fn top_share(mut h: Vec<u64>, frac: f64) -> f64 {
        h.sort_unstable_by(|a, b| b.cmp(a));
        let top = (h.len() as f64 * frac) as usize;
        h[..top].iter().sum::<u64>() as f64 / DRAWS as f64
    }

    #[test]
    fn zipf_concentrates_and_scatters() {
        let h = hits("zipf:1.2");
        let share = top_share(h.clone(), 0.10);
        assert!(share > 0.85, "zipf:1.2 top 10 % of blocks got {share}");
        // Scattered: the hot blocks are not the region's first ones.
        let first_tenth: u64 = h[..(BLOCKS / 10) as usize].iter().sum();
        assert!(
            (first_tenth as f64 / DRAWS as f64) < 0.5,
            "hot blocks bunched at the start"
        );
        // Uniform for comparison: the top 10 % get little more than 10 %.
        assert!(top_share(hits("random"), 0.10) < 0.2);
    }

    #[test]
    fn pareto_h_sends_one_minus_h_to_h_of_the_blocks() {
        let share = top_share(hits("pareto:0.2"), 0.20);
        assert!(
            (share - 0.80).abs() < 0.03,
            "pareto:0.2 top 20 % got {share}"
        );
    }

    #[test]
    fn normal_is_centred_with_the_stated_deviation() {
        let h = hits("normal:10");
        let within: u64 = h[(BLOCKS * 4 / 10) as usize..(BLOCKS * 6 / 10) as usize]
            .iter()
            .sum();
        let share = within as f64 / DRAWS as f64; // ±1 standard deviation
        assert!(
            (share - 0.6827).abs() < 0.02,
            "normal:10 within ±10 %: {share}"
        );
    }

    #[test]
    fn zoned_sends_each_zone_its_share() {
        let h = hits("zoned:60/10:30/20:10/70");
        let sum =
            |a: u64, b: u64| h[a as usize..b as usize].iter().sum::<u64>() as f64 / DRAWS as f64;
        let got = [sum(0, 1000), sum(1000, 3000), sum(3000, BLOCKS)];
        for (g, want) in got.iter().zip([0.6, 0.3, 0.1]) {
            assert!((g - want).abs() < 0.01, "zones {got:?}");
        }
        // Uniform inside a zone: no block of zone 1 far from 600 / 1000 × DRAWS / 1000.
        let expect = 0.6 * DRAWS as f64 / 1000.0;
        assert!(h[..1000]
            .iter()
            .all(|&x| (x as f64 - expect).abs() < 0.25 * expect));
    }

    #[test]
    fn bad_parameters_are_errors_naming_the_option() {
        // Set directly: prepare refuses these values itself.
        let bad = [
            RandomDistribution::Zipf(0.0),
            RandomDistribution::Pareto(1.0),
            RandomDistribution::Normal(-1.0),
            RandomDistribution::Zoned(vec![Zone {
                access_pct: 50.0,
                size_pct: 100.0,
            }]),
        ];
        for rd in bad {
            let j = PreparedJob {
                random_distribution: rd.clone(),
                ..job(&["rw=randread"])
            };
            let e = IoGen::new(&j, 0, one(M)).unwrap_err();
            assert!(
                matches!(&e, JobError::InvalidValue { option, .. } if option == "random_distribution"),
                "{rd:?}: {e}"
            );
        }
    }
}

/// `random_distribution=sequence:` (fio's examples/sequence-distribution.fio):
/// the blocks in the order listed, repeated, or strided over the region.
mod sequence {
    use super::*;

    fn blocks(opts: &[&str], region: u64) -> Vec<u64> {
        let j = job(opts);
        let mut g = IoGen::new(&j, 0, one(region)).unwrap();
        all(&mut g).iter().map(|u| u.offset / (4 * K)).collect()
    }

    #[test]
    fn fixed_sequence_repeats_and_strided_one_walks_the_region() {
        let base = ["rw=randread", "bs=4k", "random_distribution=sequence:2,0,1"];
        // size=48k io_size=24k: six I/Os, as the example's comment says.
        let fixed = blocks(&[&base[..], &["size=48k", "io_size=24k"]].concat(), 48 * K);
        assert_eq!(fixed[..6], [2, 0, 1, 2, 0, 1]);
        let strided = [&base[..], &["random_sequence_stride=1"]].concat();
        assert_eq!(blocks(&strided, 24 * K), [2, 0, 1, 5, 3, 4]);
        // 8 blocks: the third round would reach block 8, so it stops after 7 blocks' worth.
        assert_eq!(blocks(&strided, 32 * K), [2, 0, 1, 5, 3, 4]);
        let j = job(&strided);
        assert_eq!(
            j.random_distribution,
            RandomDistribution::Sequence {
                blocks: vec![2, 0, 1],
                stride: true
            }
        );
    }

    #[test]
    fn bad_sequences_are_refused_with_the_reason() {
        let e = JobSpec::new("t")
            .args(["filename=/tmp/x", "size=1m", "ioengine=null", "rw=randread"])
            .args(["random_distribution=sequence:1,x"])
            .prepare()
            .unwrap_err()
            .to_string();
        assert!(e.contains("'x' is not a block index"), "{e}");
        let j = job(&["rw=randread", "random_distribution=sequence:0,300"]);
        let e = IoGen::new(&j, 0, one(M)).unwrap_err().to_string();
        assert!(
            e.contains("block 300 is past the region (256 blocks"),
            "{e}"
        );
    }
}

/// `sprandom=1` (fio's examples/sprandom.fio): every block written, the
/// rewrites on top up to the physical size; bad combinations refused.
mod sprandom {
    use super::*;

    #[test]
    fn a_pass_writes_every_block_and_up_to_the_physical_size() {
        let opts = [
            "rw=randwrite",
            "bs=4k",
            "sprandom=1",
            "spr_op=0.25",
            "spr_num_regions=8",
        ];
        let j = job(&opts);
        let mut g = IoGen::new(&j, 0, one(4 * M)).unwrap();
        // 4 MiB logical, 25 % over-provisioning: 5 MiB physical.
        assert_eq!(g.bytes_per_pass(), 5 * M);
        let units = all(&mut g);
        assert!(units
            .iter()
            .all(|u| u.dir == IoDir::Write && u.len == 4 * K));
        let distinct: std::collections::HashSet<u64> = units.iter().map(|u| u.offset).collect();
        // The model's invalid shares average op / (1 + op): the rewrites fill
        // the over-provisioned 1 MiB (256 writes) give or take their spread
        // (sd about 14 writes), and the pass stops at the physical size, so
        // a few blocks may stay unwritten, as in fio.
        let rewrites = units.len() as u64 - distinct.len() as u64;
        assert!(
            distinct.len() as u64 > M / K - 60,
            "{} blocks",
            distinct.len()
        );
        assert!((190..=320).contains(&rewrites), "{rewrites} rewrites");
        assert!(total(&units) <= 5 * M);
    }

    #[test]
    fn sprandom_needs_random_writes_of_one_size() {
        let e = |o: &[&str]| {
            JobSpec::new("t")
                .args(["filename=/tmp/x", "size=1m", "sprandom=1"])
                .args(o.iter().copied())
                .prepare()
                .unwrap_err()
                .to_string()
        };
        assert!(e(&["rw=randrw"]).contains("use rw=randwrite"));
        assert!(e(&["rw=write"]).contains("use rw=randwrite"));
        assert!(e(&["rw=randwrite", "bsrange=4k-8k"]).contains("one block size"));
        assert!(e(&["rw=randwrite", "spr_op=1.5"]).contains("between 0 and 1"));
        let j = job(&["rw=randread", "spr_op=0.2"]);
        assert!(j
            .warnings
            .iter()
            .any(|w| w.contains("spr_op has no effect without sprandom")));
    }
}

/// `rw=trim|randtrim`: every I/O a trim, each block once per pass;
/// `trimwrite|randtrimwrite`: each block trimmed and then written at the
/// same offset and length, the write right after its trim (fio's order,
/// checked with fio 3.33's write_iolog on the null engine).
mod trims {
    use super::*;

    #[test]
    fn trim_jobs_trim_each_block_once() {
        for rw in ["rw=trim", "rw=randtrim"] {
            let mut g = IoGen::new(&job(&[rw, "bs=16k"]), 0, one(M)).unwrap();
            let units = all(&mut g);
            assert!(units.iter().all(|u| u.dir == IoDir::Trim), "{rw}");
            assert_each_block_once(&units, &one(M), 16 * K);
            assert_eq!(g.total_bytes(), Some(M));
        }
    }

    #[test]
    fn trimwrite_writes_each_block_right_after_trimming_it() {
        for rw in ["rw=trimwrite", "rw=randtrimwrite"] {
            let mut g = IoGen::new(&job(&[rw, "bs=16k"]), 0, one(M)).unwrap();
            assert!(g.trims_then_writes());
            let units = all(&mut g);
            assert_eq!(units.len() as u64, 2 * M / (16 * K), "{rw}");
            for pair in units.chunks(2) {
                assert_eq!(pair[0].dir, IoDir::Trim, "{rw}");
                assert_eq!(
                    pair[1],
                    IoUnit {
                        dir: IoDir::Write,
                        ..pair[0]
                    },
                    "{rw}"
                );
            }
            let trims: Vec<IoUnit> = units
                .iter()
                .copied()
                .filter(|u| u.dir == IoDir::Trim)
                .collect();
            assert_each_block_once(&trims, &one(M), 16 * K);
            // Progress counts both: a pass moves every byte twice.
            assert_eq!(g.total_bytes(), Some(2 * M));
        }
    }
}

mod percentage_random {
    use super::*;

    /// Of each direction's I/Os after its first, the share that starts
    /// where that direction's previous I/O ended (fio's "sequential").
    fn follow_share(units: &[IoUnit], dir: IoDir) -> f64 {
        let mine: Vec<&IoUnit> = units.iter().filter(|u| u.dir == dir).collect();
        let follows = mine
            .windows(2)
            .filter(|w| w[1].offset == w[0].offset + w[0].len)
            .count();
        follows as f64 / (mine.len() - 1) as f64
    }

    #[test]
    fn thirty_percent_random_leaves_seventy_percent_sequential() {
        // 16384 I/Os of one pass over 64 MiB: each is sequential with
        // probability 0.7, so the share has a standard deviation of
        // sqrt(0.7 * 0.3 / 16383) = 0.0036; +-0.02 is 5.6 of them. A random
        // offset follows the last one by chance about once in 16384.
        let j = job(&["rw=randread", "percentage_random=30", "randseed=1"]);
        let units = all(&mut IoGen::new(&j, 0, one(64 * M)).unwrap());
        assert_eq!(
            total(&units),
            64 * M,
            "one pass still moves the region's bytes"
        );
        let share = follow_share(&units, IoDir::Read);
        assert!((share - 0.70).abs() <= 0.02, "sequential share {share}");
        // Without the option (100, fio's default) next to none follow.
        let j = job(&["rw=randread", "randseed=1"]);
        let units = all(&mut IoGen::new(&j, 0, one(64 * M)).unwrap());
        assert!(follow_share(&units, IoDir::Read) < 0.01);
    }

    #[test]
    fn zero_is_sequential_and_a_hundred_is_the_default_stream() {
        let j = job(&["rw=randwrite", "percentage_random=0"]);
        let offsets: Vec<u64> = all(&mut IoGen::new(&j, 0, one(M)).unwrap())
            .iter()
            .map(|u| u.offset)
            .collect();
        assert_eq!(offsets, (0..256).map(|b| b * 4 * K).collect::<Vec<_>>());
        let given = job(&[
            "rw=randread",
            "bsrange=4k-16k",
            "percentage_random=100",
            "randseed=7",
        ]);
        let default = job(&["rw=randread", "bsrange=4k-16k", "randseed=7"]);
        assert_eq!(
            all(&mut IoGen::new(&given, 0, one(4 * M)).unwrap()),
            all(&mut IoGen::new(&default, 0, one(4 * M)).unwrap())
        );
    }

    #[test]
    fn per_direction_like_bs() {
        // Writes sequential, reads random: each direction follows its own last I/O.
        let j = job(&["rw=randrw", "percentage_random=100,0", "randseed=3"]);
        let units = all(&mut IoGen::new(&j, 0, one(16 * M)).unwrap());
        assert!(
            follow_share(&units, IoDir::Write) > 0.99,
            "{}",
            follow_share(&units, IoDir::Write)
        );
        assert!(
            follow_share(&units, IoDir::Read) < 0.02,
            "{}",
            follow_share(&units, IoDir::Read)
        );
    }

    #[test]
    fn time_based_runs_on_past_the_region_end_and_stays_inside() {
        let j = job(&[
            "rw=randread",
            "bssplit=4k/50:64k/50",
            "percentage_random=50",
            "time_based",
            "runtime=1",
        ]);
        let mut g = IoGen::new(&j, 0, one(M)).unwrap();
        for u in g.by_ref().take(100_000) {
            assert!(u.offset % (4 * K) == 0 && u.offset + u.len <= M, "{u:?}");
        }
    }

    #[test]
    fn bad_values_and_other_walks_are_refused_or_noted() {
        let e = JobSpec::new("t")
            .args(["size=1m", "rw=randread", "percentage_random=101"])
            .prepare();
        assert!(e
            .unwrap_err()
            .to_string()
            .contains("expected a whole percentage from 0 to 100"));
        let j = job(&["rw=read", "percentage_random=30"]);
        assert!(j
            .warnings
            .iter()
            .any(|w| w == "percentage_random has no effect on sequential I/O"));
        let j = job(&[
            "rw=randread",
            "percentage_random=30",
            "random_distribution=sequence:1,2",
        ]);
        let e = IoGen::new(&j, 0, one(M)).unwrap_err().to_string();
        assert!(
            e.contains("percentage_random below 100 with random_distribution=sequence"),
            "{e}"
        );
    }
}
