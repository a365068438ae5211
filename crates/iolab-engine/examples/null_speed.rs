//! What iolab itself costs per I/O: the null engine, 4 KiB random reads,
//! iodepth 32, one worker, time based — the same options as
//! `fio --name=x --ioengine=null --rw=randread --bs=4k --iodepth=32
//! --size=1g --time_based --runtime=5`.
//!
//! Usage: `cargo run --release -p iolab-engine --example null_speed [SECONDS] [OPTION=VALUE...]`
//! (default 5 s; extra fio options are appended, e.g.
//! `iodepth_batch_complete_max=32`). Prints IOPS, latency percentiles and
//! CPU per I/O.

use std::time::Duration;

use iolab_engine::{Run, RunConfig};

#[path = "common/mod.rs"]
mod common;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let secs: u64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(5);
    let runtime = format!("runtime={secs}");
    let extra: Vec<String> = args.collect();
    let mut opts = vec![
        "ioengine=null",
        "rw=randread",
        "bs=4k",
        "iodepth=32",
        "size=1g",
        "time_based",
        &runtime,
    ];
    opts.extend(extra.iter().map(String::as_str));
    let job = common::job("null_speed", &opts)?;
    let cfg = RunConfig {
        jobs: vec![job],
        interval: Duration::from_secs(1),
        allow_overwrite: false,
        host: String::new(),
    };
    let mut run = Run::prepare(cfg)?;
    run.start(None)?;
    let r = run.wait()?;
    common::report(&format!("iolab {}", opts.join(" ")), &r);
    Ok(())
}
