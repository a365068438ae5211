//! The data-shape options, by what lands on disk: the blocks a `sequence:`
//! distribution writes, the duplicate blocks of each dedupe mode (every
//! written block hashed), and `dedupe_global` duplicates across files.

use std::collections::HashMap;
use std::path::Path;

use crate::engine::common::*;

fn file_of(dir: &Path, name: &str, opts: &[&str]) -> Vec<u8> {
    run_ok(config(vec![job(name, dir, opts)]));
    std::fs::read(dir.join(format!("{name}.0.0"))).unwrap()
}

/// For each 4 KiB block: the rank of its content by first appearance.
fn ranks(data: &[u8]) -> Vec<usize> {
    let mut seen: HashMap<&[u8], usize> = HashMap::new();
    data.chunks(4096)
        .map(|b| {
            let n = seen.len();
            *seen.entry(b).or_insert(n)
        })
        .collect()
}

#[test]
fn sequence_distribution_writes_the_listed_blocks() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let base = [
        "rw=randwrite",
        "bs=4k",
        "size=32k",
        "buffer_pattern=0xab",
        "ioengine=psync",
    ];
    let hit = |data: &[u8]| -> Vec<usize> {
        let blocks = data.chunks(4096).enumerate();
        blocks
            .filter(|(_, b)| b.iter().all(|&x| x == 0xab))
            .map(|(i, _)| i)
            .collect()
    };
    let fixed = [&base[..], &["random_distribution=sequence:2,0,5"]].concat();
    let r = run_ok(config(vec![job("s", dir.path(), &fixed)]));
    assert_eq!(
        worker(&r, 0, 0).dirs[1].ios,
        8,
        "a pass is the region's bytes"
    );
    assert_eq!(
        hit(&std::fs::read(dir.path().join("s.0.0")).unwrap()),
        [0, 2, 5]
    );
    let strided = [
        &base[..],
        &[
            "random_distribution=sequence:1,0",
            "random_sequence_stride=1",
        ],
    ]
    .concat();
    let d = file_of(dir.path(), "t", &strided);
    assert_eq!(hit(&d), (0..8).collect::<Vec<_>>());
}

#[test]
fn dedupe_modes_repeat_the_last_unique_block_or_the_working_set() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let base = [
        "rw=write",
        "bs=4k",
        "size=4m",
        "iodepth=4",
        "ioengine=io_uring",
    ];
    for mode in ["repeat", "working_set"] {
        let mode_opt = format!("dedupe_mode={mode}");
        let opts = [
            &base[..],
            &[
                "dedupe_percentage=50",
                &mode_opt,
                "dedupe_working_set_percentage=10",
            ],
        ]
        .concat();
        let r = ranks(&file_of(dir.path(), mode, &opts));
        let distinct = r.iter().max().unwrap() + 1;
        let dups = 1024 - distinct;
        // Binomial(1024, 0.5): sd 1.6 points; 6 points is over 3.5 sd.
        assert!(
            (dups as f64 / 1024.0 - 0.5).abs() < 0.06,
            "{mode}: {dups} of 1024 blocks repeat an earlier one"
        );
        let mut later = vec![0usize; distinct];
        for (i, &k) in r.iter().enumerate() {
            if r[..i].contains(&k) {
                later[k] += 1;
            }
        }
        let repeated_max = later.iter().rposition(|&n| n > 0).unwrap();
        if mode == "working_set" {
            // The working set: the first 10 % of 1024 blocks' unique pages.
            assert!(
                repeated_max < 102,
                "a duplicate of unique page {repeated_max}"
            );
        } else {
            // Repeat: the block before, so duplicates follow the whole run.
            assert!(repeated_max > 400, "last repeated page {repeated_max}");
            for (i, &k) in r.iter().enumerate().skip(1) {
                if r[..i].contains(&k) {
                    assert_eq!(
                        k,
                        *r[..i].iter().max().unwrap(),
                        "block {i} repeats the last unique"
                    );
                }
            }
        }
    }
}

#[test]
fn dedupe_global_shares_the_working_set_between_files() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let shared = |global: &str| -> usize {
        let opts = [
            "rw=write",
            "bs=4k",
            "size=2m",
            "ioengine=psync",
            "dedupe_percentage=50",
            "dedupe_mode=working_set",
            "dedupe_working_set_percentage=20",
            global,
        ];
        run_ok(config(vec![
            job("a", dir.path(), &opts),
            job("b", dir.path(), &opts),
        ]));
        let a = std::fs::read(dir.path().join("a.0.0")).unwrap();
        let b = std::fs::read(dir.path().join("b.0.0")).unwrap();
        let in_a: std::collections::HashSet<&[u8]> = a.chunks(4096).collect();
        b.chunks(4096).filter(|c| in_a.contains(c)).count()
    };
    assert_eq!(shared("dedupe_global=0"), 0, "private working sets");
    // Each working set is 102 pages: 51 of a's first unique pages and 51
    // of b's. b has about 256 duplicates, each of a page a also holds (a's
    // own first pages, or b's, which a's ~256 duplicates cover), plus its
    // 51 first unique pages: about 307 of b's 512 blocks are in a.
    let n = shared("dedupe_global=1");
    assert!((250..360).contains(&n), "{n} of b's blocks are also in a");
}

#[test]
fn sprandom_writes_every_block_and_the_rewrites_on_top() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let opts = [
        "rw=randwrite",
        "bs=4k",
        "size=1m",
        "ioengine=psync",
        "sprandom=1",
        "spr_num_regions=4",
        "buffer_pattern=0xab",
    ];
    let r = run_ok(config(vec![job("p", dir.path(), &opts)]));
    let writes = worker(&r, 0, 0).dirs[1].ios;
    // 256 blocks; 15 % over-provisioning: at most 294 writes in all.
    assert!((256..=294).contains(&writes), "{writes} writes");
    let d = std::fs::read(dir.path().join("p.0.0")).unwrap();
    assert!(d.iter().all(|&b| b == 0xab), "every block was written");
}
