//! Option parsing and job validation: units (against fio 3.33), every
//! option of the table, defaults, the seed-002 commands, and one test per
//! class of bad input asserting the message the user sees.
//!
//! How the fio expectations were obtained: fio 3.33 on the null engine,
//! reading back what it did from its JSON output, e.g.
//! `fio --name=x --ioengine=null --size=1KiB --bs=1 --output-format=json`
//! → `io_bytes` = 1000 (so `KiB` is 1000 under the default kb_base=1024),
//! `--kb_base=1000 --size=1KiB` → 1024, `--size=1k` → 1024,
//! `--runtime=700ms --time_based` → runtime 701 ms,
//! `--thinktime=1000 --number_ios=100` → 100 ms (bare thinktime = us),
//! `--rate_iops=1k` → 1025 I/Os in 1 s (rate_iops takes size suffixes).
//!
//! Index:
//! - `units`: sizes, times, booleans, lists — against fio
//! - `jobs`: defaults, the seed-002 commands, each option
//! - `errors`: bad input, one class per test, with the message
//! - `files`: nrfiles, filesize, filename_format
//! - `table`: the option table itself (lookup, Markdown, defaults)
//! - `compat`: options met in other projects' job files
//! - `trims`: rw=trim and its kin, the trim value, what trims refuse

use iolab_core::job::{JobSpec, PreparedJob};

mod compat;
mod errors;
mod failures;
mod files;
mod jobs;
mod nbd;
mod table;
mod trims;
mod units;
mod uring;

/// A job named "t" from `key=value` / bare `key` strings.
fn spec(opts: &[&str]) -> JobSpec {
    JobSpec::new("t").args(opts.iter().copied())
}

fn prep(opts: &[&str]) -> PreparedJob {
    let s = spec(opts);
    s.prepare().unwrap_or_else(|e| panic!("{opts:?}: {e}"))
}

fn err(opts: &[&str]) -> String {
    match spec(opts).prepare() {
        Ok(j) => panic!("{opts:?} was accepted: {j:?}"),
        Err(e) => e.to_string(),
    }
}
