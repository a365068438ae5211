//! Replay a recorded arrival pattern against a stack on the lab's virtual
//! clock (`iolab_target::lab::replay_virtual`), or trace the model's own
//! closed-loop client: what the model's stack makes of a live client's
//! timing (docs/raid-lab.md, "Lab 1C at QD 4").
//!
//!     # open loop: stdin has one request a line, `ARRIVE_NS OFFSET`
//!     cargo run --release -p iolab-target --example lab_replay -- SPEC read 65536 < arrivals
//!     # closed loop: the model's client at QD 4 with a 30 µs round trip, 1 s
//!     cargo run --release -p iolab-target --example lab_replay -- SPEC read 65536 4 30000
//!
//! Prints `ARRIVE_NS OFFSET DONE_NS`, one request a line (arrival order
//! for a replay, completion order for a closed loop).

use std::collections::HashSet;
use std::io::BufRead;
use std::time::Duration;

use iolab_target::config::parse_compact;
use iolab_target::lab::{replay_virtual, run_virtual_traced, VIo, VJob};
use iolab_target::stack::walk;
use iolab_target::ServerConfig;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: lab_replay SPEC read|write BS [IODEPTH RTT_NS]";
    let (spec, rw, bs) = match &args[..] {
        [s, rw, bs, ..] => (s, rw, bs.parse::<u64>().expect(usage)),
        _ => panic!("{usage}"),
    };
    let write = rw == "write";
    let server = ServerConfig::new("127.0.0.1:0".parse().expect("an address"));
    let t = parse_compact(&[spec.as_str()], server).expect("a compact export spec");
    let dev = t.exports.get(0).expect("one export").dev().clone();
    let print = |v: VIo| println!("{} {} {}", v.arrive_ns, v.offset, v.done_ns);
    if let [_, _, _, qd, rtt] = &args[..] {
        let job = VJob {
            write,
            random: false,
            bs,
            iodepth: qd.parse().expect(usage),
            region: dev.caps().size_bytes,
            runtime: Duration::from_secs(1),
            rtt: Duration::from_nanos(rtt.parse().expect(usage)),
        };
        run_virtual_traced(&dev, job, 1, &mut |v| print(v));
    } else {
        let arrivals: Vec<(u64, u64)> = std::io::stdin()
            .lock()
            .lines()
            .map(|l| {
                let l = l.expect("stdin");
                let mut w = l
                    .split_whitespace()
                    .map(|x| x.parse::<u64>().expect("ARRIVE_NS OFFSET"));
                (w.next().expect("ARRIVE_NS"), w.next().expect("OFFSET"))
            })
            .collect();
        replay_virtual(&dev, write, bs, &arrivals)
            .into_iter()
            .for_each(print);
    }
    // Each piece's counters on stderr (the members' buffer hits, media
    // reads and seeks say where the time went).
    let mut seen = HashSet::new();
    walk(&dev, &mut seen, &mut |path, d| {
        let c: Vec<String> = d
            .counters()
            .iter()
            .map(|c| format!("{}={}", c.name, c.value))
            .collect();
        eprintln!("{path}: {}", c.join(" "));
    });
}
