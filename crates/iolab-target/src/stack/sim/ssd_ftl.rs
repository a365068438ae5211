//! sim-ssd's flash translation layer: page mapping, block allocation,
//! greedy garbage collection and TRIM — what happens, not when (ssd.rs
//! turns the work into time on the planes).
//!
//! - Logical pages (LPN) map to physical pages; a rewrite programs a new
//!   page and invalidates the old one. Host pages go round-robin over the
//!   planes (page striping, as MQSim's default channel-way-die-plane order
//!   spreads them), each plane filling its active block page by page.
//! - A plane keeps `GC_RESERVE` free blocks: below that, greedy GC picks the
//!   full block with the fewest valid pages, copies those pages into the
//!   same plane's active block (copyback: one read + one program each) and
//!   erases the block.
//! - TRIM unmaps pages; their physical pages stop counting as valid, so GC
//!   has less to copy.
//!
//! Write amplification = NAND pages programmed / host pages written.

use std::collections::VecDeque;

/// Free blocks a plane keeps for GC to copy into.
pub const GC_RESERVE: u32 = 2;
const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Free,
    Active,
    Full,
}

#[derive(Debug, Clone)]
struct Block {
    valid: u32,
    next: u32,
    state: State,
}

#[derive(Debug)]
struct Plane {
    blocks: Vec<Block>,
    free: VecDeque<u32>,
    active: u32,
}

/// What one host page write cost its plane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Work {
    pub plane: usize,
    /// Valid pages GC copied before the write could go ahead.
    pub copied: u32,
    pub erases: u32,
}

/// The mapping and the blocks of every plane.
#[derive(Debug)]
pub struct Ftl {
    ppb: u32,
    bpp: u32,
    planes: Vec<Plane>,
    l2p: Vec<u32>,
    p2l: Vec<u32>,
    next_plane: usize,
    pub host_pages: u64,
    pub nand_pages: u64,
    pub gc_runs: u64,
    pub erases: u64,
}

impl Ftl {
    /// `user_pages` logical pages over `planes` planes of `bpp` blocks of `ppb` pages.
    pub fn new(user_pages: u64, planes: usize, bpp: u32, ppb: u32) -> Ftl {
        let plane = |_| {
            let mut free: VecDeque<u32> = (1..bpp).collect();
            let mut blocks = vec![
                Block {
                    valid: 0,
                    next: 0,
                    state: State::Free
                };
                bpp as usize
            ];
            blocks[0].state = State::Active;
            free.make_contiguous();
            Plane {
                blocks,
                free,
                active: 0,
            }
        };
        let phys = planes as u64 * u64::from(bpp) * u64::from(ppb);
        Ftl {
            ppb,
            bpp,
            planes: (0..planes).map(plane).collect(),
            l2p: vec![NONE; user_pages as usize],
            p2l: vec![NONE; phys as usize],
            next_plane: 0,
            host_pages: 0,
            nand_pages: 0,
            gc_runs: 0,
            erases: 0,
        }
    }

    fn plane_of(&self, ppn: u32) -> usize {
        (ppn / (self.bpp * self.ppb)) as usize
    }

    fn block_of(&self, ppn: u32) -> u32 {
        (ppn / self.ppb) % self.bpp
    }

    /// The plane holding `lpn`, if it is mapped.
    pub fn lookup(&self, lpn: u64) -> Option<usize> {
        let p = *self.l2p.get(lpn as usize)?;
        (p != NONE).then(|| self.plane_of(p))
    }

    fn invalidate(&mut self, lpn: u64) {
        let old = self.l2p[lpn as usize];
        if old != NONE {
            let (pl, b) = (self.plane_of(old), self.block_of(old));
            self.planes[pl].blocks[b as usize].valid -= 1;
            self.p2l[old as usize] = NONE;
            self.l2p[lpn as usize] = NONE;
        }
    }

    /// Unmap `lpn` (TRIM).
    pub fn trim(&mut self, lpn: u64) {
        self.invalidate(lpn);
    }

    /// Program `lpn` into the next page of plane `pl`'s active block.
    fn place(&mut self, pl: usize, lpn: u32) {
        let (ppb, bpp) = (self.ppb, self.bpp);
        let plane = &mut self.planes[pl];
        if plane.blocks[plane.active as usize].next == ppb {
            plane.blocks[plane.active as usize].state = State::Full;
            plane.active = plane
                .free
                .pop_front()
                .expect("GC keeps a free block per plane");
            plane.blocks[plane.active as usize].state = State::Active;
        }
        let b = &mut plane.blocks[plane.active as usize];
        let ppn = (pl as u32 * bpp + plane.active) * ppb + b.next;
        b.next += 1;
        b.valid += 1;
        self.p2l[ppn as usize] = lpn;
        self.l2p[lpn as usize] = ppn;
        self.nand_pages += 1;
    }

    /// Greedy GC on plane `pl`: the full block with the fewest valid pages.
    /// Returns the pages copied, or `None` when no block can give space.
    fn collect(&mut self, pl: usize) -> Option<u32> {
        let ppb = self.ppb;
        let (victim, valid) = self.planes[pl]
            .blocks
            .iter()
            .enumerate()
            .filter(|(_, b)| b.state == State::Full && b.valid < ppb)
            .min_by_key(|(i, b)| (b.valid, *i))
            .map(|(i, b)| (i as u32, b.valid))?;
        let base = (pl as u32 * self.bpp + victim) * ppb;
        for ppn in base..base + ppb {
            let lpn = self.p2l[ppn as usize];
            if lpn != NONE {
                self.invalidate(u64::from(lpn));
                self.place(pl, lpn);
            }
        }
        let b = &mut self.planes[pl].blocks[victim as usize];
        *b = Block {
            valid: 0,
            next: 0,
            state: State::Free,
        };
        self.planes[pl].free.push_back(victim);
        self.gc_runs += 1;
        self.erases += 1;
        Some(valid)
    }

    /// Write `lpn` from the host: GC first if its plane is short of free
    /// blocks, then program it.
    pub fn write(&mut self, lpn: u64) -> Work {
        let pl = self.next_plane;
        self.next_plane = (pl + 1) % self.planes.len();
        let mut w = Work {
            plane: pl,
            ..Work::default()
        };
        while self.planes[pl].free.len() < GC_RESERVE as usize {
            match self.collect(pl) {
                Some(n) => {
                    w.copied += n;
                    w.erases += 1;
                }
                None => break,
            }
        }
        self.invalidate(lpn);
        self.place(pl, lpn as u32);
        self.host_pages += 1;
        w
    }

    /// NAND pages programmed per host page so far.
    pub fn write_amplification(&self) -> f64 {
        if self.host_pages == 0 {
            return 1.0;
        }
        self.nand_pages as f64 / self.host_pages as f64
    }
}
