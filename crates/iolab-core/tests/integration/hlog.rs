//! Interval logs (`stats::hlog`, `stats::stream`): what a stream writes
//! reads back as the exact merge of what the workers sent, whatever order
//! their intervals arrive in; a log cut at any byte reads as its whole
//! records before the cut; the stream holds only the intervals a sibling
//! has not reported yet.

use std::io::Cursor;

use iolab_core::hist::{LatHist, PackedHist};
use iolab_core::stats::hlog::{HlogEntry, HlogReader, HlogWriter};
use iolab_core::stats::stream::{IntervalStream, StreamJob};
use iolab_core::stats::{merge_series, DirInterval, IntervalSample};

/// Worker `w`'s interval `i`: known I/Os and latencies.
fn sample(w: u32, i: u64) -> IntervalSample {
    let mut h = LatHist::new();
    let n = 10 + (w as u64 * 7 + i * 3) % 50;
    for k in 0..n {
        h.record(1_000 + k * 97 + w as u64 * 1_000 + i * 10);
    }
    let mut s = IntervalSample {
        start_ns: i * 1_000_000 + w as u64,
        end_ns: (i + 1) * 1_000_000 + w as u64,
        ..Default::default()
    };
    s.dirs[0] = DirInterval {
        ios: n,
        bytes: n * 4096,
        lat_ns: PackedHist::pack(&h),
    };
    s
}

fn read(bytes: &[u8]) -> (Vec<HlogEntry>, bool) {
    let mut r = HlogReader::new(Cursor::new(bytes));
    let entries: Vec<HlogEntry> = r.by_ref().map(|e| e.expect("a valid log")).collect();
    (entries, r.truncated())
}

/// Two jobs; job 0's three workers report out of step (worker 2 ends
/// early), job 1's one worker alone.
fn streamed(per_worker: bool) -> (Vec<u8>, Vec<Vec<IntervalSample>>) {
    let log = HlogWriter::begin(Vec::new(), 1_700_000_000_000_000_000, 1_000_000, "test").unwrap();
    let jobs = [
        StreamJob {
            name: "a job".into(),
            workers: 3,
        },
        StreamJob {
            name: "b".into(),
            workers: 1,
        },
    ];
    let mut s = IntervalStream::new(log, &jobs, "h", per_worker).unwrap();
    let lens = [5u64, 5, 2];
    let series: Vec<Vec<IntervalSample>> = (0..3)
        .map(|w| (0..lens[w as usize]).map(|i| sample(w, i)).collect())
        .collect();
    s.measuring(0, 10);
    s.measuring(1, 20);
    // worker 0 runs three intervals ahead before the others report
    for x in &series[0][..3] {
        s.interval(0, 0, x).unwrap();
    }
    assert_eq!(s.pending(), 3, "held until every worker reports");
    s.interval(0, 1, &series[1][0]).unwrap();
    s.interval(0, 2, &series[2][0]).unwrap();
    assert_eq!(s.pending(), 2);
    s.interval(0, 2, &series[2][1]).unwrap();
    s.finished(0, 2).unwrap();
    for x in &series[1][1..] {
        s.interval(0, 1, x).unwrap();
    }
    for x in &series[0][3..] {
        s.interval(0, 0, x).unwrap();
    }
    s.finished(0, 0).unwrap();
    s.finished(0, 1).unwrap();
    assert_eq!(s.pending(), 0);
    s.interval(1, 0, &sample(9, 0)).unwrap();
    s.flush().unwrap();
    let bytes = std::mem::take(s.into_log().get_mut());
    (bytes, series)
}

#[test]
fn a_jobs_workers_merge_exactly_whatever_order_they_arrive_in() {
    let (bytes, series) = streamed(false);
    let (entries, truncated) = read(&bytes);
    assert!(!truncated);
    let want = merge_series(series.iter().map(|s| &s[..]));
    let got: Vec<&IntervalSample> = entries
        .iter()
        .filter_map(|e| match e {
            HlogEntry::Interval(r) if r.source.job == 0 => Some(&r.sample),
            _ => None,
        })
        .collect();
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        assert_eq!((g.start_ns, g.end_ns), (w.start_ns, w.end_ns));
        for (gd, wd) in g.dirs.iter().zip(&w.dirs) {
            assert_eq!((gd.ios, gd.bytes), (wd.ios, wd.bytes));
            assert_eq!(gd.lat_ns.unpack(), wd.lat_ns.unpack());
        }
    }
    assert!(entries.contains(&HlogEntry::JobEnd {
        job: 0,
        intervals: 5
    }));
    // job 1's worker never finished: no end line (an interrupted job)
    assert!(!entries
        .iter()
        .any(|e| matches!(e, HlogEntry::JobEnd { job: 1, .. })));
}

#[test]
fn per_worker_records_are_each_workers_own() {
    let (bytes, series) = streamed(true);
    let (entries, _) = read(&bytes);
    for (w, s) in series.iter().enumerate() {
        let mine: Vec<&IntervalSample> = entries
            .iter()
            .filter_map(|e| match e {
                HlogEntry::Interval(r)
                    if r.source.worker == Some(w as u32) && r.source.job == 0 =>
                {
                    Some(&r.sample)
                }
                _ => None,
            })
            .collect();
        assert_eq!(mine.len(), s.len());
        for (g, x) in mine.iter().zip(s) {
            assert_eq!(*g, x);
        }
    }
}

#[test]
fn a_log_cut_anywhere_reads_as_its_whole_records_before_the_cut() {
    let (bytes, _) = streamed(false);
    let (all, _) = read(&bytes);
    let first = bytes
        .windows(16)
        .position(|w| w == b"#iolab-interval ")
        .expect("a record");
    for cut in first..bytes.len() {
        let (got, truncated) = read(&bytes[..cut]);
        assert!(got.len() <= all.len());
        assert_eq!(got[..], all[..got.len()], "cut at {cut}");
        if cut < bytes.len() && bytes[cut - 1] != b'\n' {
            assert!(truncated, "cut at {cut} inside a line");
        }
    }
}
