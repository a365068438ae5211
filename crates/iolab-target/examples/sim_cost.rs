//! The simulated disks' own compute per request, on the virtual clock (no
//! sockets, no locks, no waiting): what `bench/sim_cost.py` reports beside
//! the target's CPU in real time. Each figure is the least over 7 runs of
//! 5000 requests (the machine's other load only adds), and includes the
//! closed-loop driver (`closed_loop`), so it is an upper bound.
//!
//!     cargo run --release -p iolab-target --example sim_cost

use std::time::{Duration, Instant};

use iolab_target::stack::sim::hdd::HddModel;
use iolab_target::stack::sim::hdd_mech::HddParams;
use iolab_target::stack::sim::ssd::{SsdModel, SsdParams};
use iolab_target::stack::sim::{closed_loop, Rng, SimModel, SimOp, SimReq};

fn per_request(
    mut make: impl FnMut() -> Box<dyn SimModel>,
    qd: usize,
    op: SimOp,
    size: u64,
) -> Duration {
    let n = 5000;
    (0..7)
        .map(|_| {
            let mut m = make();
            let mut r = Rng(11);
            let t0 = Instant::now();
            closed_loop(m.as_mut(), qd, n, || {
                SimReq::new(op, r.offset(size, 4096, 4096), 4096)
            });
            t0.elapsed() / n as u32
        })
        .min()
        .expect("7 runs")
}

fn main() {
    let hdd = HddParams::default();
    let ssd = SsdParams::default();
    println!("model\top\tQD\tns per request");
    for qd in [1, 4, 32] {
        let d = per_request(
            || Box::new(HddModel::new(hdd.clone())),
            qd,
            SimOp::Read,
            hdd.size_bytes,
        );
        println!("sim-hdd\t4k randread\t{qd}\t{}", d.as_nanos());
    }
    for (op, name) in [(SimOp::Read, "4k randread"), (SimOp::Write, "4k randwrite")] {
        let d = per_request(
            || Box::new(SsdModel::new(ssd.clone())),
            32,
            op,
            ssd.capacity_bytes,
        );
        println!("sim-ssd\t{name}\t32\t{}", d.as_nanos());
    }
}
