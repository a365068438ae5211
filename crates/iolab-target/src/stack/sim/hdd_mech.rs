//! sim-hdd's mechanics: parameters, geometry, seek and rotation — pure
//! functions of position and time, on a virtual clock in ns.
//!
//! Parameters (spec keys in brackets; defaults: a 2008 7200 rpm SATA drive):
//! - `size` [size] 64 GiB: the capacity the platter model spreads over its tracks;
//! - `rpm` [rpm] 7200: one revolution `rev = 60 s / rpm` = 8.33 ms;
//! - `seek_t2t` 1.0 ms, `seek_avg` 8.5 ms, `seek_full` 20 ms [seek_t2t,
//!   seek_avg, seek_full]: the three points of the seek curve;
//! - `write_settle` 0.5 ms: added to every write seek (writes settle longer);
//! - `rate_outer` 90 MiB/s, `rate_inner` 45 MiB/s: media rate at the outer
//!   and inner edge (zoned recording);
//! - `overhead` 100 us: controller time per command;
//! - `iface` 286 MiB/s: SATA 3 Gb/s after 8b/10b, for buffer hits and cached writes.
//!
//! Equations (x = radial position, 0 outer … 1 inner; N tracks):
//! - media rate `R(x) = Ro − (Ro − Ri)·x`; a track holds `R(x)·rev` bytes,
//!   so bytes before x are `B(x) = N·rev·(Ro·x − (Ro − Ri)·x²/2)` and
//!   `N = size / (rev·(Ro + Ri)/2)`; an offset o lies at the root x of `B(x) = o`.
//! - seek over d > 0 tracks, `s = d/N`: `t(d) = t2t + a·√s + b·s` (a
//!   three-point sqrt+linear curve, as DiskSim's), `t(0) = 0`. a and b are
//!   solved so that `t(N) = full` and the mean over random pairs of
//!   positions (density of s: 2(1 − s), so E[√s] = 8/15, E[s] = 1/3)
//!   equals `avg`: `a + b = full − t2t`, `8a/15 + b/3 = avg − t2t`.
//! - the platter's angle at time t is `frac((t + phase)/rev)`; an offset's
//!   angle is its place in its track; the rotational wait from time t to
//!   angle θ is `frac(θ − angle(t))·rev` — a sector just missed costs a
//!   whole revolution.
//!
//! The model has one surface (a track is a cylinder; head switches are in
//! the sustained media rate, which includes track skew).

/// Nanoseconds on the virtual clock.
pub type Ns = u64;

const MIB: f64 = 1024.0 * 1024.0;

/// sim-hdd's settings (see the module header for units and defaults).
#[derive(Debug, Clone, PartialEq)]
pub struct HddParams {
    pub size_bytes: u64,
    pub rpm: f64,
    pub seek_t2t_ns: Ns,
    pub seek_avg_ns: Ns,
    pub seek_full_ns: Ns,
    pub write_settle_ns: Ns,
    pub rate_outer_bytes_per_s: f64,
    pub rate_inner_bytes_per_s: f64,
    pub overhead_ns: Ns,
    pub iface_bytes_per_s: f64,
    /// The on-disk buffer: look-ahead segments and the write cache.
    pub cache_bytes: u64,
    pub segments: u32,
    /// On-disk write cache: a write is done once in the buffer.
    pub wcache: bool,
    /// Commands the disk reorders at once (NCQ); 1: first come, first served.
    pub ncq_depth: u32,
    /// Platter phase at time 0.
    pub seed: u64,
}

impl Default for HddParams {
    fn default() -> Self {
        HddParams {
            size_bytes: 64 << 30,
            rpm: 7200.0,
            seek_t2t_ns: 1_000_000,
            seek_avg_ns: 8_500_000,
            seek_full_ns: 20_000_000,
            write_settle_ns: 500_000,
            rate_outer_bytes_per_s: 90.0 * MIB,
            rate_inner_bytes_per_s: 45.0 * MIB,
            overhead_ns: 100_000,
            iface_bytes_per_s: 286.0 * MIB,
            cache_bytes: 16 << 20,
            segments: 16,
            wcache: true,
            ncq_depth: 32,
            seed: 0,
        }
    }
}

impl HddParams {
    /// Refuse settings the equations cannot take; the message names the key.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        let p = self;
        if p.size_bytes < 1 << 20 {
            return Err(("size", "must be at least 1 MiB".into()));
        }
        if !(p.rpm >= 1000.0 && p.rpm <= 30000.0) {
            return Err(("rpm", format!("{} is not in 1000..=30000", p.rpm)));
        }
        if !(p.seek_t2t_ns < p.seek_avg_ns && p.seek_avg_ns < p.seek_full_ns) {
            return Err((
                "seek_avg",
                "the seek times must rise: seek_t2t < seek_avg < seek_full".into(),
            ));
        }
        let (a, b) = seek_coefficients(p.seek_t2t_ns, p.seek_avg_ns, p.seek_full_ns);
        if a < 0.0 || b < 0.0 {
            return Err((
                "seek_avg",
                "no sqrt+linear curve through these three points (seek_avg too close to an end)"
                    .into(),
            ));
        }
        if !(p.rate_inner_bytes_per_s > 0.0 && p.rate_inner_bytes_per_s <= p.rate_outer_bytes_per_s)
        {
            return Err(("rate_inner", "must be > 0 and <= rate_outer".into()));
        }
        if p.iface_bytes_per_s <= 0.0 {
            return Err(("iface", "must be > 0".into()));
        }
        if p.segments == 0 || p.cache_bytes < u64::from(p.segments) * 4096 {
            return Err((
                "segments",
                "need 1.. segments of >= 4 KiB in the cache".into(),
            ));
        }
        if !(1..=32).contains(&p.ncq_depth) {
            return Err(("ncq", format!("{} is not in 1..=32", p.ncq_depth)));
        }
        Ok(())
    }
}

/// a and b of the seek curve (ns), from its three points.
pub fn seek_coefficients(t2t: Ns, avg: Ns, full: Ns) -> (f64, f64) {
    let (span, mean) = ((full - t2t) as f64, (avg - t2t) as f64);
    // a + b = span; 8a/15 + b/3 = mean  =>  a (8/15 - 1/3) = mean - span/3.
    let a = (mean - span / 3.0) / (8.0 / 15.0 - 1.0 / 3.0);
    (a, span - a)
}

/// The platter, arm and zones of one drive.
#[derive(Debug, Clone)]
pub struct Mech {
    pub p: HddParams,
    pub rev_ns: f64,
    pub tracks: u64,
    seek_a: f64,
    seek_b: f64,
    /// Media rates in bytes per ns.
    ro: f64,
    ri: f64,
    phase_ns: f64,
    /// `seek_floor[d >> SEEK_FLOOR_SHIFT]`: the read seek time of the
    /// shortest distance (>= 1) in that bucket of track distances — a lower
    /// bound on every seek in it, so SPTF can rule a command out without
    /// its square root (see `seek_floor_ns`).
    seek_floor: Vec<f64>,
}

/// Bucket width of [`Mech::seek_floor_ns`]: 64 tracks, < 0.1 % of the stroke.
const SEEK_FLOOR_SHIFT: u32 = 6;

impl Mech {
    pub fn new(p: HddParams) -> Mech {
        let rev_ns = 60e9 / p.rpm;
        let (ro, ri) = (
            p.rate_outer_bytes_per_s / 1e9,
            p.rate_inner_bytes_per_s / 1e9,
        );
        let tracks = ((p.size_bytes as f64) / (rev_ns * (ro + ri) / 2.0)).ceil() as u64;
        let (seek_a, seek_b) = seek_coefficients(p.seek_t2t_ns, p.seek_avg_ns, p.seek_full_ns);
        // SplitMix64 of the seed: a phase anywhere in the revolution.
        let mut z = p.seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        let phase_ns = ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64 * rev_ns;
        let mut m = Mech {
            p,
            rev_ns,
            tracks: tracks.max(1),
            seek_a,
            seek_b,
            ro,
            ri,
            phase_ns,
            seek_floor: Vec::new(),
        };
        m.seek_floor = (0..=(m.tracks >> SEEK_FLOOR_SHIFT))
            .map(|k| m.seek_dist_ns((k << SEEK_FLOOR_SHIFT).max(1), false))
            .collect();
        m
    }

    /// Bytes before radial position x.
    fn bytes_before(&self, x: f64) -> f64 {
        self.tracks as f64 * self.rev_ns * (self.ro * x - (self.ro - self.ri) * x * x / 2.0)
    }

    /// Radial position (0..1) of byte offset `o`: the root of B(x) = o.
    pub fn x_of(&self, o: u64) -> f64 {
        let c = o as f64 / (self.tracks as f64 * self.rev_ns);
        let k = self.ro - self.ri;
        if k < 1e-15 {
            return (c / self.ro).min(1.0);
        }
        let disc = (self.ro * self.ro - 2.0 * k * c).max(0.0);
        ((self.ro - disc.sqrt()) / k).clamp(0.0, 1.0)
    }

    /// Track holding offset `o`.
    pub fn track_of(&self, o: u64) -> u64 {
        ((self.x_of(o) * self.tracks as f64) as u64).min(self.tracks - 1)
    }

    /// Angle (0..1) of offset `o` in its track.
    pub fn angle_of(&self, o: u64) -> f64 {
        let k = self.track_of(o);
        let n = self.tracks as f64;
        let (b0, b1) = (
            self.bytes_before(k as f64 / n),
            self.bytes_before((k + 1) as f64 / n),
        );
        ((o as f64 - b0) / (b1 - b0)).clamp(0.0, 1.0 - 1e-12)
    }

    /// Media rate (bytes per ns) at offset `o`.
    pub fn rate_at(&self, o: u64) -> f64 {
        self.ro - (self.ro - self.ri) * self.x_of(o)
    }

    /// Time to pass `len` bytes under the head at offset `o`.
    pub fn media_ns(&self, o: u64, len: u64) -> f64 {
        len as f64 / self.rate_at(o)
    }

    /// Time to move `len` bytes over the host interface.
    pub fn iface_ns(&self, len: u64) -> f64 {
        len as f64 * 1e9 / self.p.iface_bytes_per_s
    }

    /// Seek time between two tracks; writes add the settle time.
    pub fn seek_ns(&self, from: u64, to: u64, write: bool) -> f64 {
        self.seek_dist_ns(from.abs_diff(to), write)
    }

    /// A lower bound on [`Self::seek_ns`] from `from` to `to`, read or
    /// write, without a square root: a table lookup. Exact in floating
    /// point too: every step of the seek curve (d/N, √, × and + of
    /// non-negative terms) is correctly rounded, hence monotone in d, so
    /// the curve at the bucket's shortest distance is <= it at any d in
    /// the bucket, and a write only adds its settle time.
    pub fn seek_floor_ns(&self, from: u64, to: u64) -> f64 {
        let d = from.abs_diff(to);
        if d == 0 {
            return 0.0;
        }
        self.seek_floor[(d >> SEEK_FLOOR_SHIFT) as usize]
    }

    /// Seek time over `d` tracks; writes add the settle time.
    fn seek_dist_ns(&self, d: u64, write: bool) -> f64 {
        if d == 0 {
            return 0.0;
        }
        let s = d as f64 / self.tracks as f64;
        let settle = if write {
            self.p.write_settle_ns as f64
        } else {
            0.0
        };
        self.p.seek_t2t_ns as f64 + self.seek_a * s.sqrt() + self.seek_b * s + settle
    }

    /// Wait from time `t` until angle `theta` is under the head.
    pub fn rot_wait_ns(&self, t: f64, theta: f64) -> f64 {
        // Integer truncation rather than fract/rem_euclid/floor, which are
        // libm calls on SPTF's hot path (turns are never negative).
        let turns = (t + self.phase_ns) / self.rev_ns;
        let now = turns - (turns as u64) as f64;
        let d = theta - now;
        let mut w = if d < 0.0 { d + 1.0 } else { d };
        // A sector exactly under the head (a stream picked up where it
        // stopped) must not cost a revolution to rounding.
        if w > 1.0 - 1e-9 {
            w = 0.0;
        }
        w * self.rev_ns
    }

    /// From track `head` at time `t`: time until offset `o` is under the head.
    pub fn position_ns(&self, head: u64, t: f64, o: u64, write: bool) -> f64 {
        let seek = self.seek_ns(head, self.track_of(o), write);
        seek + self.rot_wait_ns(t + seek, self.angle_of(o))
    }
}
