//! Units against fio 3.33: sizes (both kb_base rules), times with each
//! option's default unit, booleans, ranges, per-direction lists, bssplit,
//! CPU and percentile lists, and the inputs fio would silently misread.

use iolab_core::units::*;

#[test]
fn sizes_follow_fio_kb_base_1024() {
    let cases = [
        ("4096", 4096),
        ("1k", 1024),
        ("1K", 1024),
        ("1kb", 1024),
        ("1KB", 1024),
        ("1KiB", 1000),
        ("1kib", 1000),
        ("1m", 1 << 20),
        ("1MiB", 1_000_000),
        ("10G", 10 << 30),
        ("1t", 1 << 40),
        ("1p", 1 << 50),
        ("0x400", 1024),
        ("1b", 1),
        ("1B", 1),
    ];
    for (text, bytes) in cases {
        assert_eq!(parse_size(text, 1024), Ok(bytes), "{text}");
    }
}

#[test]
fn sizes_follow_fio_kb_base_1000() {
    for (text, bytes) in [
        ("1k", 1000),
        ("1KB", 1000),
        ("1KiB", 1024),
        ("1m", 1_000_000),
        ("1MiB", 1 << 20),
    ] {
        assert_eq!(parse_size(text, 1000), Ok(bytes), "{text}");
    }
}

/// fio 3.33 (null engine, `size=` read back from `io_bytes`): a bare `Ki`,
/// `Mi`, `Gi` is the kb_base unit, while `KiB` takes the other base.
#[test]
fn bare_iec_prefixes_are_kb_base_powers_as_fio_computes_them() {
    for (text, kb_base, bytes) in [
        ("1Ki", 1024, 1024),
        ("16Ki", 1024, 16 << 10),
        ("1Mi", 1024, 1 << 20),
        ("4Gi", 1024, 4 << 30),
        ("1ti", 1024, 1 << 40),
        ("1Ki", 1000, 1000),
        ("1Mi", 1000, 1_000_000),
        ("1GiB", 1024, 1_000_000_000),
        ("1GiB", 1000, 1 << 30),
    ] {
        assert_eq!(
            parse_size(text, kb_base),
            Ok(bytes),
            "{text} kb_base={kb_base}"
        );
    }
}

#[test]
fn sizes_fio_would_misread_are_rejected() {
    // fio 3.33 reads these as 1, 1024 and 1 without a word.
    assert!(parse_size("1.5k", 1024).unwrap_err().contains("fractional"));
    assert!(parse_size("1kx", 1024)
        .unwrap_err()
        .contains("unknown size unit 'kx'"));
    assert!(parse_size("-1", 1024).unwrap_err().contains("negative"));
    assert!(parse_size("k", 1024)
        .unwrap_err()
        .contains("expected a whole number"));
    assert!(parse_size("50%", 1024).unwrap_err().contains("percentage"));
    assert!(parse_size("99999999999p", 1024)
        .unwrap_err()
        .contains("too large"));
}

#[test]
fn times_take_the_default_unit_and_suffixes() {
    let s = NS_PER_S;
    assert_eq!(parse_time_ns("60", s), Ok(60 * s));
    assert_eq!(parse_time_ns("700ms", s), Ok(700_000_000));
    assert_eq!(parse_time_ns("700msec", s), Ok(700_000_000));
    assert_eq!(parse_time_ns("5us", s), Ok(5_000));
    assert_eq!(parse_time_ns("5usec", s), Ok(5_000));
    assert_eq!(parse_time_ns("250ns", s), Ok(250));
    assert_eq!(parse_time_ns("2s", s), Ok(2 * s));
    assert_eq!(parse_time_ns("2sec", s), Ok(2 * s));
    assert_eq!(parse_time_ns("1m", s), Ok(60 * s));
    assert_eq!(
        parse_time_ns("1M", s),
        Ok(60 * s),
        "fio lower-cases: M is minutes"
    );
    assert_eq!(parse_time_ns("1min", s), Ok(60 * s));
    assert_eq!(parse_time_ns("1h", s), Ok(3600 * s));
    assert_eq!(parse_time_ns("1d", s), Ok(86_400 * s));
    assert_eq!(
        parse_time_ns("1000", NS_PER_US),
        Ok(1_000_000),
        "thinktime: bare = us"
    );
    assert!(parse_time_ns("0.5s", s).unwrap_err().contains("fractional"));
    assert!(parse_time_ns("5x", s)
        .unwrap_err()
        .contains("unknown time unit 'x'"));
}

#[test]
fn booleans() {
    assert_eq!(parse_bool(None), Ok(true));
    for t in ["1", "true", "TRUE"] {
        assert_eq!(parse_bool(Some(t)), Ok(true));
    }
    for f in ["0", "false"] {
        assert_eq!(parse_bool(Some(f)), Ok(false));
    }
    assert!(parse_bool(Some("yes"))
        .unwrap_err()
        .contains("expected 0 or 1"));
}

#[test]
fn lists_ranges_and_splits() {
    assert_eq!(parse_size_range("4k-64k", 1024), Ok((4096, 65536)));
    assert_eq!(parse_size_range("4k:64k", 1024), Ok((4096, 65536)));
    assert!(parse_size_range("64k-4k", 1024)
        .unwrap_err()
        .contains("larger than maximum"));
    assert_eq!(split_per_dir("4k"), Ok([Some("4k"), Some("4k")]));
    assert_eq!(split_per_dir("4k,8k"), Ok([Some("4k"), Some("8k")]));
    assert_eq!(split_per_dir(",8k"), Ok([None, Some("8k")]));
    assert_eq!(split_per_dir("4k,"), Ok([Some("4k"), None]));
    assert_eq!(split_per_dir("4k,8k,"), Ok([Some("4k"), Some("8k")]));
    assert_eq!(split_per_dir("4k,8k,16k"), Ok([Some("4k"), Some("8k")]));
    assert!(split_per_dir("4k,8k,16k,1k").is_err());
    assert_eq!(
        parse_bssplit("4k/50:64k/50", 1024),
        Ok(vec![(4096, 50), (65536, 50)])
    );
    // fio's blank shares: the rest split evenly; remainders go to the first blanks.
    assert_eq!(
        parse_bssplit("4k/50:1k/:32k/", 1024),
        Ok(vec![(4096, 50), (1024, 25), (32768, 25)])
    );
    assert_eq!(
        parse_bssplit("1k/:2k/:4k/", 1024),
        Ok(vec![(1024, 34), (2048, 33), (4096, 33)])
    );
    assert_eq!(parse_bssplit("4k/100:8k/0", 1024), Ok(vec![(4096, 100)]));
    assert_eq!(parse_cpu_list("0-3,6"), Ok(vec![0, 1, 2, 3, 6]));
    assert_eq!(parse_cpu_list("6,0-1,1"), Ok(vec![0, 1, 6]));
    assert!(parse_cpu_list("3-1").unwrap_err().contains("backwards"));
    assert_eq!(
        parse_percentile_list("99.9:50:90"),
        Ok(vec![50.0, 90.0, 99.9])
    );
    assert!(parse_percentile_list("0:50")
        .unwrap_err()
        .contains("outside (0, 100]"));
    assert!(parse_percentile_list("50:101")
        .unwrap_err()
        .contains("outside (0, 100]"));
    assert!(parse_percentile_list("50:x")
        .unwrap_err()
        .contains("not a number"));
}

#[test]
fn iolab_durations_take_decimals_and_default_to_seconds() {
    let cases = [
        ("1s", 1_000_000_000),
        ("500ms", 500_000_000),
        ("2", 2_000_000_000),
        ("1.5s", 1_500_000_000),
        ("250us", 250_000),
        ("250µs", 250_000),
        ("0.25", 250_000_000),
        ("1m", 60_000_000_000),
        (" 7 ns ", 7),
    ];
    for (text, ns) in cases {
        assert_eq!(parse_duration_ns(text), Ok(ns), "{text}");
    }
    for bad in ["", "soon", "-1s", "1 parsec", "1.2.3s", "1e9"] {
        assert!(parse_duration_ns(bad).is_err(), "{bad}");
    }
}
