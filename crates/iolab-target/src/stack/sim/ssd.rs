//! sim-ssd: a NAND flash SSD — channels x dies x planes, a write buffer,
//! page mapping with over-provisioning and greedy GC (ssd_ftl.rs) — timed
//! on a virtual clock in ns.
//!
//! Parameters (spec keys; defaults after MQSim's, see docs/simulation.md):
//! - `capacity` 1 GiB: the size the host sees (small, so that
//!   preconditioning takes seconds to minutes);
//! - `op` 0.127: over-provisioning, spare / user space (MQSim's default);
//! - `channels` 8, `dies` 4 per channel, `planes` 2 per die;
//! - `page` 4 KiB (the mapping unit), `pages_per_block` 64;
//! - `t_read` 75 us, `t_prog` 750 us, `t_erase` 3.8 ms (MQSim's defaults);
//! - `channel_rate` 333 MB/s (ONFI 333 MT/s, 8 bits wide);
//! - `buffer` 8 MiB: the DRAM write buffer;
//! - `overhead` 10 us: firmware time per command;
//! - `mapped` off: with `on`, a never-written page reads as if the drive
//!   had been filled once sequentially (page `lpn` on plane `lpn mod
//!   planes`), so a read study needs no preconditioning pass;
//! - `link_rate` none: the host interface (PCIe), one FIFO resource every
//!   read's data crosses after the channels, at this many bytes/s;
//! - `stage` none, `spill` 0: the controller stages read data on its way
//!   to the host in an SRAM buffer of `stage` bytes. With more read data in
//!   flight in the drive than that (`inflight` bytes, this read's included,
//!   counted at its arrival), the share `1 − stage/inflight` is staged in
//!   the drive's DRAM instead, and each such byte costs `spill` more link
//!   time (the extra DRAM write and read it takes):
//!   `link time = len/link_rate × (1 + spill × max(0, 1 − stage/inflight))`.
//!   So a drive's bandwidth falls once more than `stage` bytes of reads are
//!   queued in it, to `1/(1 + spill)` of the link rate in the limit: the
//!   deep-queue loss of seed 004's test 3, which a bound on data in flight
//!   (IO pacing) avoids (docs/labs.md, "lab pacing").
//!
//! Equations (every resource keeps the time it is busy until; a request
//! takes each one it needs in turn, first come first served):
//! - write, per page: it enters the buffer at `t_in = max(arrival, when a
//!   buffer page frees)`; the request is acknowledged at
//!   `max(t_in) + overhead` (FUA: when its pages are programmed). Each page
//!   then crosses its channel (`page/channel_rate`) and is programmed on its
//!   plane (`t_prog`) after whatever GC that plane owes — `copied ×
//!   (t_read + t_prog) + erases × t_erase`, copyback inside the plane; the
//!   buffer page frees when the program ends.
//! - read, per page: `t_read` on its plane once free, then the channel; an
//!   unmapped page costs only the overhead.
//! - TRIM: `overhead`; FLUSH: when every buffered page is programmed.
//!
//! Fresh out of the box GC never runs and writes go at the planes' program
//! rate; once every block has been written, each host page costs
//! `WA = 1/(1 − u)` programs (ssd_ftl.rs) and throughput falls by that factor.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::hdd_mech::Ns;
use super::ssd_ftl::{Ftl, GC_RESERVE};
use super::{Decided, SimModel, SimOp, SimReq};

/// sim-ssd's settings (see the module header).
#[derive(Debug, Clone, PartialEq)]
pub struct SsdParams {
    pub capacity_bytes: u64,
    pub op: f64,
    pub channels: u32,
    pub dies: u32,
    pub planes: u32,
    pub page_bytes: u64,
    pub pages_per_block: u32,
    pub read_ns: Ns,
    pub program_ns: Ns,
    pub erase_ns: Ns,
    pub channel_bytes_per_s: f64,
    pub buffer_bytes: u64,
    pub overhead_ns: Ns,
    pub mapped: bool,
    /// Host interface rate, bytes/s; `None`: not modelled.
    pub link_bytes_per_s: Option<f64>,
    /// SRAM staging buffer for read data, bytes; `None`: unbounded.
    pub stage_bytes: Option<u64>,
    /// Extra link time per spilled byte, as a fraction of its link time.
    pub spill: f64,
}

impl Default for SsdParams {
    fn default() -> Self {
        SsdParams {
            capacity_bytes: 1 << 30,
            op: 0.127,
            channels: 8,
            dies: 4,
            planes: 2,
            page_bytes: 4096,
            pages_per_block: 64,
            read_ns: 75_000,
            program_ns: 750_000,
            erase_ns: 3_800_000,
            channel_bytes_per_s: 333e6,
            buffer_bytes: 8 << 20,
            overhead_ns: 10_000,
            mapped: false,
            link_bytes_per_s: None,
            stage_bytes: None,
            spill: 0.0,
        }
    }
}

impl SsdParams {
    pub fn plane_count(&self) -> u32 {
        self.channels * self.dies * self.planes
    }

    pub fn user_pages(&self) -> u64 {
        self.capacity_bytes.div_ceil(self.page_bytes)
    }

    /// Blocks per plane: the user pages plus `op` spare, spread evenly.
    pub fn blocks_per_plane(&self) -> u32 {
        let phys = self.user_pages() as f64 * (1.0 + self.op);
        let per_plane = phys / f64::from(self.plane_count() * self.pages_per_block);
        per_plane.ceil() as u32
    }

    /// Spare blocks per plane beyond the user data's, and how many GC needs.
    fn spare_blocks(&self) -> (f64, u32) {
        let user_per_plane =
            self.user_pages() as f64 / f64::from(self.plane_count() * self.pages_per_block);
        let spare = f64::from(self.blocks_per_plane()) - user_per_plane.ceil();
        (spare, GC_RESERVE + 2)
    }

    fn gc_has_room(&self) -> bool {
        let (spare, need) = self.spare_blocks();
        spare >= f64::from(need)
    }

    /// The refusal with its figures: what each plane has, what it needs, and
    /// the least `op` (this capacity) or `capacity` (this op) that gives it,
    /// each found by trying the model's own sizing (0.1 % steps of op; steps
    /// of one block per plane of capacity).
    fn too_little_spare(&self) -> String {
        let (spare, need) = self.spare_blocks();
        let block_bytes = self.page_bytes * u64::from(self.pages_per_block);
        let mib = |b: u64| b as f64 / f64::from(1u32 << 20);
        let mut msg = format!(
            "too little spare for GC: each of the {} planes needs {need} spare blocks of {:.2} MiB; \
             capacity {:.1} MiB at op {:.1}% gives {spare}",
            self.plane_count(),
            mib(block_bytes),
            mib(self.capacity_bytes),
            self.op * 100.0,
        );
        // The spec's op is a fraction up to 100 % (config::params).
        let least_op = (10..=1000)
            .map(|m| f64::from(m) / 1000.0)
            .find(|&op| SsdParams { op, ..self.clone() }.gc_has_room());
        if let Some(op) = least_op {
            msg += &format!("; raise op to {:.1}% or more", op * 100.0);
        }
        let step = block_bytes * u64::from(self.plane_count());
        let least_capacity = (1..=(64u64 << 30) / step)
            .map(|n| n * step)
            .filter(|&c| c > self.capacity_bytes)
            .find(|&c| {
                SsdParams {
                    capacity_bytes: c,
                    ..self.clone()
                }
                .gc_has_room()
            });
        match (least_op.is_some(), least_capacity) {
            (true, Some(c)) => msg += &format!(" (or capacity to {:.0} MiB)", mib(c).ceil()),
            (false, Some(c)) => {
                msg += &format!("; raise capacity to {:.0} MiB or more", mib(c).ceil())
            }
            (true, None) => {}
            (false, None) => msg += "; use fewer channels, dies or planes, or smaller blocks",
        }
        msg
    }

    /// Refuse settings the model cannot take; the message names the key.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if !self.page_bytes.is_power_of_two() || !(512..=65536).contains(&self.page_bytes) {
            return Err(("page", "must be a power of two in 512..=64k".into()));
        }
        if self.capacity_bytes < self.page_bytes || self.capacity_bytes > 64 << 30 {
            return Err(("capacity", "must be between one page and 64 GiB".into()));
        }
        if !(0.01..=4.0).contains(&self.op) {
            return Err(("op", format!("{} is not in 0.01..=4", self.op)));
        }
        for (k, v) in [
            ("channels", self.channels),
            ("dies", self.dies),
            ("planes", self.planes),
            ("pages_per_block", self.pages_per_block),
        ] {
            if !(1..=1024).contains(&v) {
                return Err((k, format!("{v} is not in 1..=1024")));
            }
        }
        if !self.gc_has_room() {
            return Err(("op", self.too_little_spare()));
        }
        if self.channel_bytes_per_s <= 0.0 {
            return Err(("channel_rate", "must be > 0".into()));
        }
        if self.buffer_bytes < self.page_bytes {
            return Err(("buffer", "must hold at least one page".into()));
        }
        if self.link_bytes_per_s.is_some_and(|r| r <= 0.0) {
            return Err(("link_rate", "must be > 0".into()));
        }
        if self.stage_bytes == Some(0) {
            return Err(("stage", "must be > 0 (omit it for no staging limit)".into()));
        }
        if !(0.0..=100.0).contains(&self.spill) {
            return Err(("spill", format!("{} is not in 0..=100", self.spill)));
        }
        if self.spill > 0.0 && (self.stage_bytes.is_none() || self.link_bytes_per_s.is_none()) {
            return Err((
                "spill",
                "needs stage and link_rate (it lengthens link transfers)".into(),
            ));
        }
        Ok(())
    }
}

/// sim-ssd on the virtual clock.
#[derive(Debug)]
pub struct SsdModel {
    p: SsdParams,
    pub ftl: Ftl,
    plane_free: Vec<f64>,
    channel_free: Vec<f64>,
    /// When each buffered page is programmed (frees its buffer slot).
    buffered: BinaryHeap<Reverse<Ns>>,
    /// Reads in the drive: (completion, bytes), earliest first.
    reads: BinaryHeap<Reverse<(Ns, u64)>>,
    read_bytes_in_flight: u64,
    link_free: f64,
    /// Read bytes whose link transfer was lengthened by staging in DRAM.
    spilled_bytes: f64,
    done: Decided,
    next_id: u64,
    requests: u64,
    bytes: u64,
}

impl SsdModel {
    pub fn new(p: SsdParams) -> SsdModel {
        let planes = p.plane_count() as usize;
        let ftl = Ftl::new(
            p.user_pages(),
            planes,
            p.blocks_per_plane(),
            p.pages_per_block,
        );
        SsdModel {
            plane_free: vec![0.0; planes],
            channel_free: vec![0.0; p.channels as usize],
            buffered: BinaryHeap::new(),
            reads: BinaryHeap::new(),
            read_bytes_in_flight: 0,
            link_free: 0.0,
            spilled_bytes: 0.0,
            done: Decided::default(),
            next_id: 0,
            requests: 0,
            bytes: 0,
            ftl,
            p,
        }
    }

    pub fn params(&self) -> &SsdParams {
        &self.p
    }

    fn channel_of(&self, plane: usize) -> usize {
        plane / (self.p.dies * self.p.planes) as usize
    }

    fn xfer_ns(&self) -> f64 {
        self.p.page_bytes as f64 * 1e9 / self.p.channel_bytes_per_s
    }

    fn pages(&self, r: &SimReq) -> std::ops::Range<u64> {
        let first = r.offset / self.p.page_bytes;
        let end = (r.offset + r.len.max(1)).div_ceil(self.p.page_bytes);
        first..end.min(self.p.user_pages())
    }

    /// Channel, then plane: returns when the page is programmed.
    fn program(&mut self, t_in: f64, lpn: u64) -> f64 {
        let w = self.ftl.write(lpn);
        let ch = self.channel_of(w.plane);
        let ch_end = self.channel_free[ch].max(t_in) + self.xfer_ns();
        self.channel_free[ch] = ch_end;
        let p = &self.p;
        let gc = f64::from(w.copied) * (p.read_ns + p.program_ns) as f64
            + f64::from(w.erases) * p.erase_ns as f64;
        let start = self.plane_free[w.plane].max(t_in) + gc;
        let end = start.max(ch_end) + p.program_ns as f64;
        self.plane_free[w.plane] = end;
        end
    }

    fn write(&mut self, t: f64, r: &SimReq) -> f64 {
        let slots = (self.p.buffer_bytes / self.p.page_bytes) as usize;
        let (mut ack, mut programmed) = (t, t);
        for lpn in self.pages(r) {
            while self
                .buffered
                .peek()
                .is_some_and(|&Reverse(f)| f as f64 <= t)
            {
                self.buffered.pop();
            }
            let t_in = if self.buffered.len() >= slots {
                let Reverse(f) = self.buffered.pop().expect("the buffer is full");
                (f as f64).max(t)
            } else {
                t
            };
            let end = self.program(t_in, lpn);
            self.buffered.push(Reverse(end.ceil() as Ns));
            ack = ack.max(t_in);
            programmed = programmed.max(end);
        }
        let ov = self.p.overhead_ns as f64;
        if r.fua {
            programmed + ov
        } else {
            ack + ov
        }
    }

    fn read(&mut self, t: f64, r: &SimReq) -> f64 {
        let ov = self.p.overhead_ns as f64;
        let mut end = t + ov;
        let planes = u64::from(self.p.plane_count());
        for lpn in self.pages(r) {
            let Some(pl) = self
                .ftl
                .lookup(lpn)
                .or_else(|| self.p.mapped.then_some((lpn % planes) as usize))
            else {
                continue;
            };
            let sensed = self.plane_free[pl].max(t + ov) + self.p.read_ns as f64;
            self.plane_free[pl] = sensed;
            let ch = self.channel_of(pl);
            let out = self.channel_free[ch].max(sensed) + self.xfer_ns();
            self.channel_free[ch] = out;
            end = end.max(out);
        }
        match self.p.link_bytes_per_s {
            Some(rate) => self.link(t, r.len, end, rate),
            None => end,
        }
    }

    /// The host link after the channels (see the module header): returns
    /// when the read's data has crossed it.
    fn link(&mut self, t: f64, len: u64, ready: f64, rate: f64) -> f64 {
        while let Some(&Reverse((done, bytes))) = self.reads.peek() {
            if done as f64 > t {
                break;
            }
            self.reads.pop();
            self.read_bytes_in_flight -= bytes;
        }
        let inflight = (self.read_bytes_in_flight + len) as f64;
        let share = self
            .p
            .stage_bytes
            .map_or(0.0, |s| (1.0 - s as f64 / inflight).max(0.0));
        self.spilled_bytes += share * len as f64;
        let xfer = len as f64 * 1e9 / rate * (1.0 + self.p.spill * share);
        let end = self.link_free.max(ready) + xfer;
        self.link_free = end;
        self.reads.push(Reverse((end.ceil() as Ns, len)));
        self.read_bytes_in_flight += len;
        end
    }
}

impl SimModel for SsdModel {
    /// Every resource is first come first served, so a request's completion
    /// is known when it arrives.
    fn submit(&mut self, _now: Ns, arrival: Ns, r: SimReq) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.requests += 1;
        self.bytes += r.len;
        let t = arrival as f64;
        let end = match r.op {
            SimOp::Read => self.read(t, &r),
            SimOp::Write => self.write(t, &r),
            SimOp::Trim => {
                for lpn in self.pages(&r) {
                    // Only whole pages are unmapped.
                    let whole = lpn * self.p.page_bytes >= r.offset
                        && (lpn + 1) * self.p.page_bytes <= r.offset + r.len;
                    if whole {
                        self.ftl.trim(lpn);
                    }
                }
                t + self.p.overhead_ns as f64
            }
            SimOp::Flush => {
                let last = self.buffered.iter().map(|&Reverse(f)| f).max().unwrap_or(0);
                (last as f64).max(t) + self.p.overhead_ns as f64
            }
        };
        self.done.insert(id, end.ceil() as Ns);
        id
    }

    fn advance(&mut self, _now: Ns) {}

    fn decided(&mut self) -> &mut Decided {
        &mut self.done
    }

    fn next_event(&self, now: Ns) -> Ns {
        now + 1_000
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let f = &self.ftl;
        vec![
            ("requests", self.requests),
            ("bytes", self.bytes),
            ("host_pages", f.host_pages),
            ("media_writes", f.nand_pages),
            ("gc_runs", f.gc_runs),
            ("spilled_bytes", self.spilled_bytes.round() as u64),
            ("erases", f.erases),
            // Write amplification in thousandths (integers only here).
            (
                "wa_milli",
                (f.write_amplification() * 1000.0).round() as u64,
            ),
        ]
    }
}
