//! Building block devices from parameters: one function per backend and
//! layer kind, reading exactly the keys each one documents in its file's
//! header (stack/*.rs).

use std::sync::Arc;

use super::params::Params;
use crate::error::TargetError;
use crate::measure::Recorder;
use crate::stack::corrupt::{CorruptLayer, CorruptParams};
use crate::stack::delay::{DelayLayer, DelayParams};
use crate::stack::file::{FileDev, FileParams};
use crate::stack::inject::{InjectLayer, InjectParams};
use crate::stack::memory::MemoryDev;
use crate::stack::null::NullDev;
use crate::stack::stats::StatsLayer;
use crate::stack::{BlockDev, Op};
use crate::stats::NamedRecorder;

pub const BACKENDS: &str = "memory, file, null, raid0, raid1, raid10, raid5";
pub const LAYERS: &str = "delay, inject, corrupt, stats, cache";

/// Build the backend `kind` from the keys of `p` that belong to it.
pub fn backend(kind: &str, p: &mut Params) -> Result<Arc<dyn BlockDev>, TargetError> {
    Ok(match kind {
        "memory" => {
            let size = p.size("size")?;
            let size = p.required("size", size)?;
            Arc::new(MemoryDev::new(size).map_err(|m| p.err("size", m))?)
        }
        "null" => {
            let size = p.size("size")?;
            Arc::new(NullDev::new(p.required("size", size)?))
        }
        "file" => {
            let path = p.string("path")?;
            let fp = FileParams {
                path: p.required("path", path)?.into(),
                size_bytes: p.size("size")?,
                direct: p.bool("direct")?.unwrap_or(false),
                read_only: p.bool("read_only")?.unwrap_or(false),
            };
            Arc::new(FileDev::open(fp).map_err(|m| p.err("path", m))?)
        }
        level if super::raid::LEVELS.contains(&level) => super::raid::raid(level, p)?,
        other => {
            return Err(p.err(
                "backend",
                format!("unknown backend '{other}' (known: {BACKENDS})"),
            ))
        }
    })
}

/// Where stats layers register their counters; names must be unique.
#[derive(Debug, Default)]
pub struct LayerStats {
    pub recorders: Vec<NamedRecorder>,
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
    Ok(match kind {
        "delay" => Arc::new(DelayLayer::new(dev, delay_params(p)?)),
        "inject" => {
            let ip = InjectParams {
                rate: p.fraction("rate")?.unwrap_or(0.0),
                offsets: p.sizes("offsets")?.unwrap_or_default(),
                ops: ops(p)?,
                seed: p.uint("seed")?.unwrap_or(0),
            };
            Arc::new(InjectLayer::new(dev, ip).map_err(|m| p.err("rate", m))?)
        }
        "corrupt" => {
            let cp = CorruptParams {
                rate: p.fraction("rate")?.unwrap_or(0.0),
                bits: u32::try_from(p.uint("bits")?.unwrap_or(1))
                    .map_err(|_| p.err("bits", "too large"))?,
                offsets: p.sizes("offsets")?.unwrap_or_default(),
                seed: p.uint("seed")?.unwrap_or(0),
            };
            Arc::new(CorruptLayer::new(dev, cp).map_err(|m| p.err("rate", m))?)
        }
        "stats" => {
            let name = p
                .string("name")?
                .unwrap_or_else(|| default_name.to_string());
            let rec = stats.register(p, name.clone())?;
            Arc::new(StatsLayer::new(dev, name, rec))
        }
        "cache" => super::raid::cache(dev, p)?,
        "split" => {
            return Err(p.err(
                "type",
                "split is not a layer here: set split = N on the device or export",
            ));
        }
        other => return Err(p.err("type", format!("unknown layer '{other}' (known: {LAYERS})"))),
    })
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
