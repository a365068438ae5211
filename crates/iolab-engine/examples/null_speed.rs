//! What iolab itself costs per I/O: the null engine, 4 KiB random reads,
//! iodepth 32, one worker, time based — the same options as
//! `fio --name=x --ioengine=null --rw=randread --bs=4k --iodepth=32
//! --size=1g --time_based --runtime=5`.
//!
//! Usage: `cargo run --release -p iolab-engine --example null_speed [SECONDS] [OPTION=VALUE...]`
//! (default 5 s; extra fio options are appended, e.g.
//! `iodepth_batch_complete_max=32`). Prints IOPS, latency percentiles and
//! CPU per I/O.

mod common;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let opts = [
        "ioengine=null",
        "rw=randread",
        "bs=4k",
        "iodepth=32",
        "size=1g",
        "time_based",
    ];
    common::run("null_speed", &opts, std::env::args().skip(1))
}
