//! The nbd backend: 4 KiB random reads, iodepth 32, one worker, against an
//! NBD server — the same options as `fio --name=x --ioengine=nbd
//! --uri=URI --rw=randread --bs=4k --iodepth=32 --time_based --runtime=5`.
//!
//! Usage: `cargo run --release -p iolab-engine --example nbd_speed URI [SECONDS] [OPTION=VALUE...]`
//! (e.g. `nbd+unix:///?socket=/tmp/kit.sock` against `nbdkit -U
//! /tmp/kit.sock memory 1G`; extra fio options are appended, e.g.
//! `nbd_connections=2`).

mod common;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let uri = args
        .next()
        .ok_or("usage: nbd_speed URI [SECONDS] [OPTION=VALUE...]")?;
    let uri = format!("uri={uri}");
    let opts = [
        "ioengine=nbd",
        &uri,
        "rw=randread",
        "bs=4k",
        "iodepth=32",
        "time_based",
    ];
    common::run("nbd_speed", &opts, args)
}
