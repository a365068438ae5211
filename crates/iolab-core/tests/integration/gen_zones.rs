//! Tests of fio's zone modes in the generator: the offsets issued under
//! `zonemode=strided` (zonesize, zonerange, zoneskip, and zonesize alone),
//! and the write pointers of `zonemode=zbd` (writes at the pointer, reads
//! below it, capacity, open-zone limits, resets). Jobs are fio options
//! prepared by the option table, as a user's are.

use std::collections::HashSet;

use iolab_core::gen::{FileRegion, IoGen, IoUnit};
use iolab_core::job::{IoDir, JobSpec, PreparedJob, ZoneMode};

const K: u64 = 1024;
const M: u64 = 1024 * K;

fn job(opts: &[&str]) -> PreparedJob {
    JobSpec::new("z")
        .args(["filename=/tmp/x", "size=1m", "ioengine=null"])
        .args(opts.iter().copied())
        .prepare()
        .unwrap_or_else(|e| panic!("{opts:?}: {e}"))
}

fn gen(opts: &[&str], start: u64, len: u64) -> IoGen {
    IoGen::new(&job(opts), 0, vec![FileRegion { start, len }]).expect("generator")
}

fn offsets_k(units: &[IoUnit]) -> Vec<u64> {
    units.iter().map(|u| u.offset / K).collect()
}

mod strided {
    use super::*;

    // The expected offsets of these tests are what fio 3.33 issues for the
    // same job (its write_iolog), except where a comment says otherwise.

    #[test]
    fn zonesize_then_zoneskip_then_wrap() {
        // 64 KiB region, 4 KiB reads: 8 KiB zones, 8 KiB skipped between.
        let units: Vec<_> = gen(
            &["zonemode=strided", "zonesize=8k", "zoneskip=8k"],
            0,
            64 * K,
        )
        .collect();
        assert_eq!(
            offsets_k(&units),
            [0, 4, 16, 20, 32, 36, 48, 52, 0, 4, 16, 20, 32, 36, 48, 52]
        );
        // The pass moves the region's length (size). fio 3.33 repeats this
        // 16-I/O sequence once more here (32 I/Os for size=64k; 16 with
        // io_size=64k, or with zonesize=16k zoneskip=16k): iolab moves size.
        assert_eq!(units.iter().map(|u| u.len).sum::<u64>(), 64 * K);
    }

    #[test]
    fn zones_move_on_past_size_to_the_end_of_the_file() {
        // size=16k of I/O, zones of 4 KiB every 16 KiB: fio's zones march
        // on to the end of the 64 KiB file, not around the 16 KiB region.
        let opts = ["zonemode=strided", "zonesize=4k", "zoneskip=12k"];
        let mut g = gen(&opts, 0, 16 * K);
        g.set_file_end(0, 64 * K);
        assert_eq!(offsets_k(&g.collect::<Vec<_>>()), [0, 16, 32, 48]);
        let within: Vec<_> = gen(&opts, 0, 16 * K).collect();
        assert_eq!(
            offsets_k(&within),
            [0, 0, 0, 0],
            "file end unknown: the region's"
        );
    }

    #[test]
    fn zonesize_alone_means_strided_as_in_fio() {
        let j = job(&["zonesize=8k", "zoneskip=8k"]);
        assert_eq!(j.zones.mode, ZoneMode::Strided);
        assert_eq!(j.zones.range_bytes, 8 * K, "zonerange defaults to zonesize");
    }

    #[test]
    fn zonesize_above_zonerange_goes_over_the_zone_again() {
        let units: Vec<_> = gen(
            &["zonemode=strided", "zonesize=16k", "zonerange=8k"],
            0,
            32 * K,
        )
        .collect();
        assert_eq!(offsets_k(&units), [0, 4, 0, 4, 8, 12, 8, 12]);
    }

    #[test]
    fn zonesize_below_zonerange_reads_the_zone_start_only() {
        // fio 3.33, write_iolog: offset=8k size=56k zonesize=4k
        // zonerange=16k on a 64 KiB file reads exactly these (KiB).
        let mut g = gen(
            &["zonemode=strided", "zonesize=4k", "zonerange=16k"],
            8 * K,
            56 * K,
        );
        g.set_file_end(0, 64 * K);
        assert_eq!(
            offsets_k(&g.collect::<Vec<_>>()),
            [8, 24, 40, 56, 8, 24, 40, 56, 8, 24, 40, 56, 8, 24]
        );
    }

    #[test]
    fn random_io_stays_in_the_zone_and_covers_it() {
        let units: Vec<_> = gen(
            &[
                "zonemode=strided",
                "zonesize=32k",
                "zoneskip=32k",
                "rw=randread",
            ],
            0,
            M,
        )
        .collect();
        // Each run of 8 I/Os covers one 32 KiB zone, every block once.
        for (i, chunk) in units.chunks(8).enumerate() {
            let zone = (i as u64 * 64 * K) % M;
            let blocks: HashSet<u64> = chunk.iter().map(|u| u.offset).collect();
            let want: HashSet<u64> = (0..8).map(|b| zone + b * 4 * K).collect();
            assert_eq!(blocks, want, "zone {i}");
        }
    }

    #[test]
    fn zonemode_none_with_zonesize_is_an_error() {
        let e = JobSpec::new("z")
            .args(["filename=/tmp/x", "size=1m", "zonemode=none", "zonesize=1m"])
            .prepare()
            .unwrap_err();
        assert!(e.to_string().contains("zonemode=none and zonesize"), "{e}");
    }

    #[test]
    fn create_serialize_0_says_files_are_laid_out_one_at_a_time() {
        let j = job(&["create_serialize=0"]);
        assert!(!j.zones.create_serialize);
        assert!(
            j.warnings.iter().any(|w| w.contains("one at a time")),
            "{:?}",
            j.warnings
        );
    }

    #[test]
    fn strided_without_zonesize_is_an_error() {
        let e = JobSpec::new("z")
            .args(["filename=/tmp/x", "size=1m", "zonemode=strided"])
            .prepare()
            .unwrap_err();
        assert!(e.to_string().contains("needs zonesize"), "{e}");
    }
}

mod zbd {
    use super::*;

    fn wps(g: &IoGen) -> Vec<u64> {
        g.zone_table(0).expect("zbd table").snapshot().wp_bytes
    }

    #[test]
    fn random_writes_land_on_write_pointers() {
        // 4 zones of 64 KiB; one pass of random 4 KiB writes.
        let mut g = gen(
            &["zonemode=zbd", "zonesize=64k", "rw=randwrite"],
            0,
            256 * K,
        );
        let mut expect = [0u64; 4];
        let units: Vec<_> = g.by_ref().collect();
        for u in &units {
            let z = (u.offset / (64 * K)) as usize;
            assert_eq!(
                u.offset,
                z as u64 * 64 * K + expect[z],
                "write off its zone's pointer"
            );
            expect[z] += u.len;
        }
        assert_eq!(units.len(), 64);
        assert_eq!(wps(&g), expect.to_vec());
        assert!(
            expect.iter().filter(|&&w| w > 0).count() > 1,
            "random zones: {expect:?}"
        );
    }

    /// fio's zbd-rand-write-trim-gc.fio: a randtrim job beside a writer
    /// resets whole zones (bs = zonesize), which the writer then refills
    /// from their starts.
    #[test]
    fn a_trim_resets_its_zone_for_every_writer_of_the_file() {
        let region = || {
            vec![FileRegion {
                start: 0,
                len: 256 * K,
            }]
        };
        let mut w = IoGen::new(
            &job(&["zonemode=zbd", "zonesize=64k", "rw=write", "size=256k"]),
            0,
            region(),
        )
        .unwrap();
        let written: Vec<_> = w.by_ref().take(20).collect();
        assert_eq!(written.len(), 20);
        assert_eq!(wps(&w), [64 * K, 16 * K]);
        let trim = job(&[
            "zonemode=zbd",
            "zonesize=64k",
            "rw=trim",
            "bs=64k",
            "size=256k",
        ]);
        let mut t = IoGen::new(&trim, 0, region()).unwrap();
        t.share_zones(0, w.zone_table(0).unwrap());
        let u = t.next().unwrap();
        assert_eq!((u.dir, u.offset, u.len), (IoDir::Trim, 0, 64 * K));
        assert_eq!(wps(&w)[0], 0, "zone 0 reset for the writer too");
        assert_eq!(w.zone_table(0).unwrap().snapshot().resets, 1);
        // Trims one zone each and the whole region once per pass.
        assert_eq!(t.by_ref().count(), 3);
        // A trim smaller than a zone is refused by name (fio: "Trim offset
        // not at zone start").
        let e = JobSpec::new("z")
            .args([
                "filename=/tmp/x",
                "size=256k",
                "zonemode=zbd",
                "zonesize=64k",
            ])
            .args(["rw=randtrim", "bs=4k"])
            .prepare()
            .unwrap_err();
        assert!(
            e.to_string().contains("give bs=zonesize (65536 bytes)"),
            "{e}"
        );
    }

    #[test]
    fn reads_stay_below_the_write_pointer() {
        let j = job(&["zonemode=zbd", "zonesize=64k", "rw=randread"]);
        let mut w = IoGen::new(
            &job(&["zonemode=zbd", "zonesize=64k", "rw=write", "size=96k"]),
            0,
            vec![FileRegion {
                start: 0,
                len: 96 * K,
            }],
        )
        .unwrap();
        // 96 KiB region: one whole zone (the rest is cut, as fio cuts it).
        assert_eq!(w.bytes_per_pass(), 64 * K);
        let written: Vec<_> = w.by_ref().take(5).collect();
        assert_eq!(offsets_k(&written), [0, 4, 8, 12, 16]);
        let mut r = IoGen::new(
            &j,
            0,
            vec![FileRegion {
                start: 0,
                len: 64 * K,
            }],
        )
        .unwrap();
        r.share_zones(0, w.zone_table(0).unwrap());
        for u in r.by_ref().take(200) {
            assert_eq!(u.dir, IoDir::Read);
            assert!(
                u.offset + u.len <= 20 * K,
                "read past the write pointer: {u:?}"
            );
        }
    }

    #[test]
    fn sequential_read_of_empty_zones_reads_nothing() {
        // fio 3.33 on a fresh regular file: no reads, exit status 0.
        let units: Vec<_> = gen(
            &["zonemode=zbd", "zonesize=64k", "time_based", "runtime=1"],
            0,
            256 * K,
        )
        .collect();
        assert!(units.is_empty(), "{units:?}");
        let beyond: Vec<_> = gen(
            &["zonemode=zbd", "zonesize=64k", "read_beyond_wp=1"],
            0,
            256 * K,
        )
        .collect();
        assert_eq!(beyond.len(), 64, "read_beyond_wp reads the whole region");
    }

    #[test]
    fn capacity_ends_each_zone_and_full_zones_are_reset() {
        let mut g = gen(
            &[
                "zonemode=zbd",
                "zonesize=64k",
                "zonecapacity=16k",
                "rw=write",
                "loops=2",
            ],
            0,
            128 * K,
        );
        let units: Vec<_> = g.by_ref().collect();
        // The same as fio 3.33 writes on a regular file (its write_iolog).
        assert_eq!(
            offsets_k(&units),
            [0, 4, 8, 12, 64, 68, 72, 76, 0, 4, 8, 12, 64, 68, 72, 76]
        );
        let snap = g.zone_table(0).unwrap().snapshot();
        assert_eq!(snap.wp_bytes, [16 * K, 16 * K]);
        assert_eq!(snap.resets, 2, "the second pass reset both full zones");
    }

    #[test]
    fn max_open_zones_limits_the_zones_written() {
        let mut g = gen(
            &[
                "zonemode=zbd",
                "zonesize=64k",
                "rw=randwrite",
                "max_open_zones=2",
                "norandommap",
            ],
            0,
            M,
        );
        let units: Vec<_> = g.by_ref().take(20).collect();
        let zones: HashSet<u64> = units.iter().map(|u| u.offset / (64 * K)).collect();
        assert_eq!(zones.len(), 2, "{zones:?}");
        assert_eq!(g.zone_table(0).unwrap().snapshot().open.len(), 2);
    }

    #[test]
    fn reset_threshold_and_frequency_reset_zones() {
        // Threshold 0: from the first write on, every 4th write resets its zone.
        let mut g = gen(
            &[
                "zonemode=zbd",
                "zonesize=64k",
                "rw=randwrite",
                "zone_reset_threshold=0",
                "zone_reset_frequency=0.25",
            ],
            0,
            256 * K,
        );
        let n = g.by_ref().count() as u64;
        assert_eq!(n, 64);
        assert_eq!(g.zone_table(0).unwrap().snapshot().resets, n / 4);
    }

    #[test]
    fn job_max_open_zones_fills_one_zone_at_a_time() {
        let mut g = gen(
            &[
                "zonemode=zbd",
                "zonesize=16k",
                "rw=randwrite",
                "job_max_open_zones=1",
            ],
            0,
            64 * K,
        );
        let units: Vec<_> = g.by_ref().collect();
        // One open zone: four writes fill it (it closes), then the next.
        for chunk in units.chunks(4) {
            let z = chunk[0].offset / (16 * K);
            let offs: Vec<u64> = chunk.iter().map(|u| u.offset - z * 16 * K).collect();
            assert_eq!(offs, [0, 4 * K, 8 * K, 12 * K], "{units:?}");
        }
        assert!(g.zone_table(0).unwrap().snapshot().open.is_empty());
    }

    #[test]
    fn no_threshold_resets_below_the_threshold() {
        // 4 zones of 64 KiB (256 KiB); threshold 0.5 = 128 KiB of data.
        let mut g = gen(
            &[
                "zonemode=zbd",
                "zonesize=64k",
                "rw=write",
                "zone_reset_threshold=0.5",
                "zone_reset_frequency=1",
            ],
            0,
            256 * K,
        );
        let first: Vec<_> = g.by_ref().take(32).collect();
        assert_eq!(
            g.zone_table(0).unwrap().snapshot().resets,
            0,
            "below the threshold"
        );
        assert_eq!(first.last().unwrap().offset, 124 * K);
        // From 128 KiB of data on, every write (frequency 1) resets its zone first.
        let next = g.next().unwrap();
        assert_eq!(
            next.offset,
            128 * K,
            "zone 2 reset: its pointer was already 0"
        );
        assert_eq!(g.zone_table(0).unwrap().snapshot().resets, 1);
    }

    #[test]
    fn ignore_zone_limits_says_it_has_nothing_to_ignore() {
        let j = job(&["zonemode=zbd", "zonesize=64k", "ignore_zone_limits=1"]);
        assert!(
            j.warnings.iter().any(|w| w.contains("ignore_zone_limits")),
            "{:?}",
            j.warnings
        );
    }

    #[test]
    fn sizes_in_zones_are_counts_of_zonesize() {
        let j = job(&[
            "zonemode=zbd",
            "zonesize=64k",
            "size=2z",
            "offset=3z",
            "rw=write",
        ]);
        assert_eq!((j.size, j.offset), (Some(128 * K), 192 * K));
        // A later size in bytes wins over an earlier count, as options do.
        assert_eq!(
            job(&["zonesize=64k", "size=2z", "size=8k"]).size,
            Some(8 * K)
        );
        let mut g = IoGen::new(
            &j,
            0,
            vec![FileRegion {
                start: j.offset,
                len: 128 * K,
            }],
        )
        .unwrap();
        let first = g.next().unwrap();
        assert_eq!(
            first.offset,
            192 * K,
            "writes begin at the third zone's pointer"
        );
        let e = JobSpec::new("z")
            .args(["filename=/tmp/x", "size=2z"])
            .prepare()
            .unwrap_err();
        assert!(e.to_string().contains("needs zonesize"), "{e}");
    }

    #[test]
    fn zbd_errors_name_the_option() {
        for (opts, want) in [
            (&["zonemode=zbd"][..], "needs zonesize"),
            (
                &["zonemode=zbd", "zonesize=64k", "zoneskip=4k"],
                "zoneskip must be 0",
            ),
            (
                &["zonemode=zbd", "zonesize=64k", "zonerange=32k"],
                "zonerange equal to zonesize",
            ),
            (
                &["zonemode=zbd", "zonesize=64k", "zonecapacity=128k"],
                "larger than zonesize",
            ),
            (
                &["zonemode=zbd", "zonesize=4k", "bs=8k"],
                "do not fit in a zone",
            ),
        ] {
            let e = JobSpec::new("z")
                .args(["filename=/tmp/x", "size=1m"])
                .args(opts.iter().copied())
                .prepare()
                .unwrap_err();
            assert!(e.to_string().contains(want), "{opts:?}: {e}");
        }
    }
}
