//! Building block devices from parameters: one table entry per backend
//! ([`BACKENDS`]) and layer ([`LAYERS`]) — its name, every key it reads,
//! and its builder, which reads exactly the keys its file's header
//! documents (stack/*.rs). Unknown keys are refused before building; the
//! tables drive the error messages and the test that docs/target.md
//! names every key.

use std::sync::Arc;

use super::params::Params;
use crate::error::TargetError;
use crate::measure::Recorder;
use crate::stack::corrupt::{CorruptLayer, CorruptParams};
use crate::stack::delay::{DelayLayer, DelayParams};
use crate::stack::file::{FileDev, FileParams};
use crate::stack::inject::{InjectLayer, InjectParams};
use crate::stack::link::{LinkLayer, LinkParams, Wire};
use crate::stack::memory::MemoryDev;
use crate::stack::null::NullDev;
use crate::stack::stats::StatsLayer;
use crate::stack::{BlockDev, Op};
use crate::stats::NamedRecorder;

/// A backend: its name in a config, every key it reads, and its builder
/// (which takes exactly those keys; `backend` refuses any other first).
#[derive(Debug)]
pub struct BackendKind {
    pub name: &'static str,
    pub keys: &'static [&'static str],
    pub build: fn(&mut Params) -> Result<Arc<dyn BlockDev>, TargetError>,
}

/// A layer: its `type`, every key it reads (besides `type`), and its
/// builder, given the device beneath, the stats registry and the name a
/// stats layer takes by default.
#[derive(Debug)]
pub struct LayerKind {
    pub name: &'static str,
    pub keys: &'static [&'static str],
    pub build: LayerBuild,
}

pub type LayerBuild = fn(
    Arc<dyn BlockDev>,
    &mut Params,
    &mut LayerStats,
    &str,
) -> Result<Arc<dyn BlockDev>, TargetError>;

/// Every backend. A new one is registered here, with all its keys (docs/target.md
/// is checked against this table).
pub const BACKENDS: &[BackendKind] = &[
    BackendKind {
        name: "memory",
        keys: &["size"],
        build: memory,
    },
    BackendKind {
        name: "file",
        keys: &["path", "size", "direct", "read_only"],
        build: file,
    },
    BackendKind {
        name: "null",
        keys: &["size"],
        build: null,
    },
    BackendKind {
        name: "sim-hdd",
        keys: super::sim::HDD_KEYS,
        build: super::sim::hdd,
    },
    BackendKind {
        name: "sim-ssd",
        keys: super::sim::SSD_KEYS,
        build: super::sim::ssd,
    },
    BackendKind {
        name: "raid0",
        keys: super::raid::RAID_KEYS,
        build: |p| super::raid::raid("raid0", p),
    },
    BackendKind {
        name: "raid1",
        keys: super::raid::RAID_KEYS,
        build: |p| super::raid::raid("raid1", p),
    },
    BackendKind {
        name: "raid10",
        keys: super::raid::RAID_KEYS,
        build: |p| super::raid::raid("raid10", p),
    },
    BackendKind {
        name: "raid5",
        keys: super::raid::RAID_KEYS,
        build: |p| super::raid::raid("raid5", p),
    },
];

/// Every layer. A new one is registered here, with all its keys.
pub const LAYERS: &[LayerKind] = &[
    LayerKind {
        name: "delay",
        keys: &[
            "read",
            "write",
            "flush",
            "read_tail",
            "write_tail",
            "tail_rate",
            "seed",
        ],
        build: |dev, p, _, _| Ok(Arc::new(DelayLayer::new(dev, delay_params(p)?))),
    },
    LayerKind {
        name: "inject",
        keys: &["rate", "offsets", "ops", "seed"],
        build: inject,
    },
    LayerKind {
        name: "corrupt",
        keys: &["rate", "bits", "offsets", "seed"],
        build: corrupt,
    },
    LayerKind {
        name: "stats",
        keys: &["name"],
        build: stats,
    },
    LayerKind {
        name: "cache",
        keys: super::raid::CACHE_KEYS,
        build: |dev, p, _, _| super::raid::cache(dev, p),
    },
    LayerKind {
        name: "link",
        keys: &["name", "bw", "lat"],
        build: link,
    },
];

fn names<T>(kinds: &[T], name: fn(&T) -> &'static str) -> String {
    kinds.iter().map(name).collect::<Vec<_>>().join(", ")
}

/// Run a builder after refusing unknown keys (so a misspelt key is named
/// as such, not as the default it left in place), and check that the
/// builder read no key missing from its table (tables and docs stay true).
fn checked<T>(
    what: &str,
    keys: &[&'static str],
    p: &mut Params,
    build: impl FnOnce(&mut Params) -> Result<T, TargetError>,
) -> Result<T, TargetError> {
    p.refuse_unknown(keys)?;
    let asked_before = p.asked().len();
    p.allow(keys);
    let r = build(p);
    let stray: Vec<&str> = p.asked()[asked_before..]
        .iter()
        .copied()
        .filter(|k| !keys.contains(k))
        .collect();
    debug_assert!(
        stray.is_empty(),
        "{what} reads keys missing from its table in config/build.rs: {stray:?}"
    );
    r
}

/// Build the backend `kind` from the keys of `p` that belong to it.
pub fn backend(kind: &str, p: &mut Params) -> Result<Arc<dyn BlockDev>, TargetError> {
    let Some(k) = BACKENDS.iter().find(|k| k.name == kind) else {
        let known = names(BACKENDS, |k| k.name);
        return Err(p.err(
            "backend",
            format!("unknown backend '{kind}' (known: {known})"),
        ));
    };
    checked(kind, k.keys, p, k.build)
}

fn memory(p: &mut Params) -> Result<Arc<dyn BlockDev>, TargetError> {
    let size = p.size("size")?;
    let size = p.required("size", size)?;
    Ok(Arc::new(
        MemoryDev::new(size).map_err(|m| p.err("size", m))?,
    ))
}

fn null(p: &mut Params) -> Result<Arc<dyn BlockDev>, TargetError> {
    let size = p.size("size")?;
    Ok(Arc::new(NullDev::new(p.required("size", size)?)))
}

fn file(p: &mut Params) -> Result<Arc<dyn BlockDev>, TargetError> {
    let path = p.string("path")?;
    let fp = FileParams {
        path: p.required("path", path)?.into(),
        size_bytes: p.size("size")?,
        direct: p.bool("direct")?.unwrap_or(false),
        read_only: p.bool("read_only")?.unwrap_or(false),
    };
    Ok(Arc::new(FileDev::open(fp).map_err(|m| p.err("path", m))?))
}

/// Where stats layers register their counters (names must be unique),
/// and the wires link layers share (one per name).
#[derive(Debug, Default)]
pub struct LayerStats {
    pub recorders: Vec<NamedRecorder>,
    pub wires: Vec<Arc<Wire>>,
}

impl LayerStats {
    fn register(&mut self, p: &Params, name: String) -> Result<Arc<Recorder>, TargetError> {
        if self.recorders.iter().any(|(n, _)| *n == name) {
            return Err(p.err(
                "name",
                format!("a stats layer named '{name}' exists already"),
            ));
        }
        let rec = Arc::new(Recorder::new());
        self.recorders.push((name, rec.clone()));
        Ok(rec)
    }
}

/// Wrap `dev` in the layer `p` describes (its `type` key already taken).
/// `default_name` names a stats layer that has no `name` key.
pub fn layer(
    kind: &str,
    dev: Arc<dyn BlockDev>,
    p: &mut Params,
    stats: &mut LayerStats,
    default_name: &str,
) -> Result<Arc<dyn BlockDev>, TargetError> {
    if kind == "split" {
        return Err(p.err(
            "type",
            "split is not a layer here: set split = N on the device or export",
        ));
    }
    let Some(k) = LAYERS.iter().find(|k| k.name == kind) else {
        let known = names(LAYERS, |k| k.name);
        return Err(p.err("type", format!("unknown layer '{kind}' (known: {known})")));
    };
    checked(kind, k.keys, p, |p| (k.build)(dev, p, stats, default_name))
}

fn inject(
    dev: Arc<dyn BlockDev>,
    p: &mut Params,
    _: &mut LayerStats,
    _: &str,
) -> Result<Arc<dyn BlockDev>, TargetError> {
    let ip = InjectParams {
        rate: p.fraction("rate")?.unwrap_or(0.0),
        offsets: p.sizes("offsets")?.unwrap_or_default(),
        ops: ops(p)?,
        seed: p.uint("seed")?.unwrap_or(0),
    };
    Ok(Arc::new(
        InjectLayer::new(dev, ip).map_err(|m| p.err("rate", m))?,
    ))
}

fn corrupt(
    dev: Arc<dyn BlockDev>,
    p: &mut Params,
    _: &mut LayerStats,
    _: &str,
) -> Result<Arc<dyn BlockDev>, TargetError> {
    let cp = CorruptParams {
        rate: p.fraction("rate")?.unwrap_or(0.0),
        bits: u32::try_from(p.uint("bits")?.unwrap_or(1))
            .map_err(|_| p.err("bits", "too large"))?,
        offsets: p.sizes("offsets")?.unwrap_or_default(),
        seed: p.uint("seed")?.unwrap_or(0),
    };
    Ok(Arc::new(
        CorruptLayer::new(dev, cp).map_err(|m| p.err("rate", m))?,
    ))
}

fn stats(
    dev: Arc<dyn BlockDev>,
    p: &mut Params,
    stats: &mut LayerStats,
    default_name: &str,
) -> Result<Arc<dyn BlockDev>, TargetError> {
    let name = p
        .string("name")?
        .unwrap_or_else(|| default_name.to_string());
    let rec = stats.register(p, name.clone())?;
    Ok(Arc::new(StatsLayer::new(dev, name, rec)))
}

/// A link layer over the wire of its name: the first of a name makes it,
/// the others must give the same settings (or none besides the name).
fn link(
    dev: Arc<dyn BlockDev>,
    p: &mut Params,
    stats: &mut LayerStats,
    _: &str,
) -> Result<Arc<dyn BlockDev>, TargetError> {
    let name = p.string("name")?.unwrap_or_else(|| "link".to_string());
    let bw = p.size("bw")?;
    let lat = p.duration("lat")?;
    if let Some(w) = stats.wires.iter().find(|w| w.params().name == name) {
        let q = w.params();
        if bw.is_some_and(|b| b != q.bw_bytes_per_s) || lat.is_some_and(|l| l != q.lat) {
            return Err(p.err(
                "bw",
                format!("link '{name}' is one wire: give it one bw and lat (or name another link)"),
            ));
        }
        return Ok(Arc::new(LinkLayer::new(dev, w.clone())));
    }
    let lp = LinkParams {
        name,
        bw_bytes_per_s: p.required("bw", bw)?,
        lat: lat.unwrap_or_default(),
    };
    let w = Wire::new(lp).map_err(|m| p.err("bw", m))?;
    stats.wires.push(w.clone());
    Ok(Arc::new(LinkLayer::new(dev, w)))
}

fn delay_params(p: &mut Params) -> Result<DelayParams, TargetError> {
    let d = DelayParams::default();
    let tail_rate_given = p.has("tail_rate");
    let dp = DelayParams {
        read: p.duration("read")?.unwrap_or(d.read),
        write: p.duration("write")?.unwrap_or(d.write),
        flush: p.duration("flush")?.unwrap_or(d.flush),
        read_tail: p.duration("read_tail")?,
        write_tail: p.duration("write_tail")?,
        tail_rate: p.fraction("tail_rate")?.unwrap_or(d.tail_rate),
        seed: p.uint("seed")?.unwrap_or(0),
    };
    let no_tail = dp.read_tail.is_none() && dp.write_tail.is_none();
    if no_tail && tail_rate_given {
        return Err(p.err("tail_rate", "given without read_tail or write_tail"));
    }
    if no_tail && [dp.read, dp.write, dp.flush].iter().all(|d| d.is_zero()) {
        return Err(p.err("read", "every delay is 0: the layer would never act"));
    }
    Ok(dp)
}

fn ops(p: &mut Params) -> Result<Vec<Op>, TargetError> {
    let Some(names) = p.list("ops")? else {
        return Ok(vec![Op::Read, Op::Write]);
    };
    names
        .iter()
        .map(|n| {
            Op::parse(n).ok_or_else(|| {
                p.err(
                    "ops",
                    format!("unknown op '{n}' (read, write, flush, trim, zero)"),
                )
            })
        })
        .collect()
}
