//! io_uring, O_DIRECT, 4 KiB random reads, iodepth 32, one worker, on a
//! 1 GiB file — the same options as `fio --name=x --ioengine=io_uring
//! --direct=1 --rw=randread --bs=4k --iodepth=32 --size=1g --time_based
//! --runtime=5 --filename=FILE`.
//!
//! Usage: `cargo run --release -p iolab-engine --example uring_speed [DIR] [SECONDS] [OPTION=VALUE...]`
//! (default: the system temp dir, 5 s; extra fio options are appended,
//! e.g. `ioengine=psync`). The file `DIR/uring_speed.0.0` is created and
//! filled on first use and kept, so fio can run on the same file.

use std::time::Duration;

use iolab_engine::{Run, RunConfig};

#[path = "common/mod.rs"]
mod common;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .unwrap_or_else(|| std::env::temp_dir().display().to_string());
    let secs: u64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(5);
    let (directory, runtime) = (format!("directory={dir}"), format!("runtime={secs}"));
    let extra: Vec<String> = args.collect();
    let mut opts = vec![
        "ioengine=io_uring",
        "direct=1",
        "rw=randread",
        "bs=4k",
        "iodepth=32",
        "size=1g",
        "time_based",
        &runtime,
        &directory,
    ];
    opts.extend(extra.iter().map(String::as_str));
    let job = common::job("uring_speed", &opts)?;
    let cfg = RunConfig {
        jobs: vec![job],
        interval: Duration::from_secs(1),
        allow_overwrite: false,
        host: String::new(),
    };
    let mut run = Run::prepare(cfg)?;
    for n in run.layout_notes() {
        eprintln!("{n}");
    }
    run.start(None)?;
    let r = run.wait()?;
    common::report(&format!("iolab {}", opts.join(" ")), &r);
    Ok(())
}
