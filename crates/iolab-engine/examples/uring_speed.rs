//! io_uring, O_DIRECT, 4 KiB random reads, iodepth 32, one worker, on a
//! 1 GiB file — the same options as `fio --name=x --ioengine=io_uring
//! --direct=1 --rw=randread --bs=4k --iodepth=32 --size=1g --time_based
//! --runtime=5 --filename=FILE`.
//!
//! Usage: `cargo run --release -p iolab-engine --example uring_speed [DIR] [SECONDS] [OPTION=VALUE...]`
//! (default: the system temp dir, 5 s; extra fio options are appended,
//! e.g. `ioengine=psync`). The file `DIR/uring_speed.0.0` is created and
//! filled on first use and kept, so fio can run on the same file.

mod common;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .unwrap_or_else(|| std::env::temp_dir().display().to_string());
    let directory = format!("directory={dir}");
    let opts = [
        "ioengine=io_uring",
        "direct=1",
        "rw=randread",
        "bs=4k",
        "iodepth=32",
        "size=1g",
        "time_based",
        &directory,
    ];
    common::run("uring_speed", &opts, args)
}
