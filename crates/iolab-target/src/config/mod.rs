//! A target's configuration: a TOML file, or compact specs from the command
//! line, turned into exports ready to serve ([`TargetSpec`]); the command
//! line's flags over it are in [`overrides`].
//!
//! The formats — the compact `NAME=BACKEND[,KEY=VALUE…][+LAYER[,KEY=VALUE…]…]`
//! grammar, the TOML tables (`[server]`, `pacing`, `[[device]]`,
//! `[[export]]` with `layers`), every key, unit and default — are documented
//! once, in docs/target.md ("Configuration"); a test (`config/tests.rs`)
//! checks that page against the key tables here ([`SERVER_KEYS`],
//! [`EXPORT_KEYS`], [`DEVICE_KEYS`], [`LAYER_KEYS`], [`TOP_LEVEL_KEYS`],
//! [`pacing::PACING_KEYS`], and each backend's and layer's in
//! [`build::BACKENDS`] and [`build::LAYERS`]) and builds its example.
//!
//! Every key is read by a typed getter of [`params::Params`]; a key no piece
//! reads is refused, and every error names the key it is about, as a path:
//! `export[1] (slow).layers[0] (delay).read: '1' has no unit; …`.

pub mod build;
pub mod overrides;
pub mod pacing;
pub mod params;
pub mod raid;
mod read;
mod sim;

use std::path::Path;
use std::sync::Arc;

use crate::error::TargetError;
use crate::export::{Export, ExportSet};
use crate::net::ListenAddr;
use crate::server::Server;
use crate::server_config::ServerConfig;
use crate::stack::split::split;
use crate::stack::BlockDev;
use crate::stats::NamedRecorder;
use build::LayerStats;
use params::{Params, Value};
pub use read::{
    parse_compact_spec, RawConfig, DEVICE_KEYS, EXPORT_KEYS, LAYER_KEYS, SERVER_KEYS,
    TOP_LEVEL_KEYS,
};

/// The default listening address: loopback, NBD's IANA port.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:10809";

/// Exports and settings ready to serve.
#[derive(Debug)]
pub struct TargetSpec {
    pub server: ServerConfig,
    pub exports: ExportSet,
    /// Counters of the stacks' stats layers.
    pub layer_stats: Vec<NamedRecorder>,
}

impl TargetSpec {
    /// Bind a server for this target.
    pub fn bind(self) -> Result<Server, TargetError> {
        Server::bind_with_layers(self.server, self.exports, self.layer_stats)
    }
}

/// Read and build a TOML config file.
pub fn load_toml(path: &Path) -> Result<TargetSpec, TargetError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| TargetError::ConfigFile {
        path: shown.clone(),
        msg: e.to_string(),
    })?;
    let raw = RawConfig::from_toml(&text).map_err(|e| match e {
        TargetError::ConfigFile { msg, .. } => TargetError::ConfigFile { path: shown, msg },
        other => other,
    })?;
    raw.build()
}

/// Build a TOML config given as text.
pub fn parse_toml(text: &str) -> Result<TargetSpec, TargetError> {
    RawConfig::from_toml(text)?.build()
}

/// Build exports from compact specs, served with `server`.
pub fn parse_compact(specs: &[&str], server: ServerConfig) -> Result<TargetSpec, TargetError> {
    let exports = specs
        .iter()
        .enumerate()
        .map(|(i, s)| parse_compact_spec(i, s))
        .collect::<Result<_, _>>()?;
    let raw = RawConfig {
        server: None,
        pacing: None,
        devices: Vec::new(),
        exports,
    };
    raw.build_with(server)
}

/// A `[[device]]` or `[[export]]` entry: its keys and its layers' keys.
#[derive(Debug, Clone)]
pub struct Piece {
    pub params: Params,
    pub layers: Vec<Params>,
}

/// A built device: the whole stack, or its parts when split.
struct Device {
    name: String,
    whole: Arc<dyn BlockDev>,
    parts: Option<Vec<Arc<dyn BlockDev>>>,
}

impl RawConfig {
    /// Build with the `[server]` table (or the defaults).
    pub fn build(mut self) -> Result<TargetSpec, TargetError> {
        let server = self.server_settings()?;
        self.build_with(server)
    }

    /// The `[server]` table (or the defaults) with `pacing` applied, taken
    /// out of the config: the settings, before any device is built.
    fn server_settings(&mut self) -> Result<ServerConfig, TargetError> {
        let explicit_max = self
            .server
            .as_ref()
            .is_some_and(|p| p.has("max_request_bytes"));
        let mut server = match self.server.take() {
            Some(p) => server_config(p)?,
            None => ServerConfig::new(
                DEFAULT_LISTEN
                    .parse()
                    .map_err(|m| TargetError::config("server.listen", m))?,
            ),
        };
        if let Some(p) = self.pacing.take() {
            pacing::apply(&mut server, pacing::pacing_params(p)?, explicit_max);
        }
        Ok(server)
    }

    /// The devices and exports, after the settings that need none are
    /// checked: a refused setting builds (and creates) nothing.
    fn build_with(self, server: ServerConfig) -> Result<TargetSpec, TargetError> {
        server.validate_settings()?;
        let mut stats = LayerStats::default();
        let mut devices: Vec<Device> = Vec::new();
        for (i, piece) in self.devices.into_iter().enumerate() {
            let d = device(i, piece, &mut stats)?;
            if devices.iter().any(|o| o.name == d.name) {
                return Err(TargetError::config(
                    format!("device[{i}].name"),
                    format!("'{}' is defined twice", d.name),
                ));
            }
            devices.push(d);
        }
        let mut exports = Vec::new();
        for (i, piece) in self.exports.into_iter().enumerate() {
            export(i, piece, &devices, &mut stats, &mut exports)?;
        }
        Ok(TargetSpec {
            server,
            exports: ExportSet::new(exports)?,
            layer_stats: stats.recorders,
        })
    }
}

fn server_config(mut p: Params) -> Result<ServerConfig, TargetError> {
    p.refuse_unknown(SERVER_KEYS)?;
    p.allow(SERVER_KEYS);
    let listen = p.string("listen")?.unwrap_or_else(|| DEFAULT_LISTEN.into());
    let listen: ListenAddr = listen.parse().map_err(|m: String| p.err("listen", m))?;
    let mut c = ServerConfig::new(listen);
    c.allow_remote = p.bool("allow_remote")?.unwrap_or(c.allow_remote);
    let usize_of = |p: &Params, k: &'static str, v: Option<u64>, d: usize| {
        v.map_or(Ok(d), |v| {
            usize::try_from(v).map_err(|_| p.err(k, "too large"))
        })
    };
    let v = p.uint("max_connections")?;
    c.max_connections = usize_of(&p, "max_connections", v, c.max_connections)?;
    let v = p.uint("workers")?;
    c.workers = usize_of(&p, "workers", v, c.workers)?;
    let v = p.uint("max_inflight")?;
    c.max_inflight = usize_of(&p, "max_inflight", v, c.max_inflight)?;
    c.max_inflight_bytes = p
        .size("max_inflight_bytes")?
        .unwrap_or(c.max_inflight_bytes);
    if let Some(v) = p.size("max_request_bytes")? {
        c.max_request_bytes =
            u32::try_from(v).map_err(|_| p.err("max_request_bytes", "more than 4 GiB"))?;
    }
    c.handshake_timeout = p
        .duration("handshake_timeout")?
        .unwrap_or(c.handshake_timeout);
    c.shutdown_grace = p.duration("shutdown_grace")?.unwrap_or(c.shutdown_grace);
    c.realtime = p.bool("realtime")?.unwrap_or(c.realtime);
    if let Some(v) = p.string("conn_io")? {
        c.conn_io = v.parse().map_err(|m: String| p.err("conn_io", m))?;
    }
    if let Some(v) = p.string("zero_copy")? {
        c.zero_copy = v.parse().map_err(|m: String| p.err("zero_copy", m))?;
    }
    p.finish()?;
    Ok(c)
}

/// Apply `layers` in order over `dev`. With `repeat` (one of several
/// exports made from one entry), a stats layer's name gets the index.
fn apply_layers(
    mut dev: Arc<dyn BlockDev>,
    layers: &[Params],
    stats: &mut LayerStats,
    default_name: &str,
    repeat: Option<usize>,
) -> Result<Arc<dyn BlockDev>, TargetError> {
    for (j, lp) in layers.iter().enumerate() {
        let mut p = lp.clone();
        p.set_path(format!("{}[{j}]", lp.path()));
        p.allow(LAYER_KEYS);
        let kind = p.string("type")?;
        let kind = p.required("type", kind)?;
        p.set_path(format!("{}[{j}] ({kind})", lp.path()));
        if let (Some(i), "stats") = (repeat, kind.as_str()) {
            p.allow(&["name"]);
            if let Some(n) = p.string("name")? {
                p.insert("name", Value::Text(format!("{n}{i}")));
            }
        }
        dev = build::layer(&kind, dev, &mut p, stats, default_name)?;
        p.finish()?;
    }
    Ok(dev)
}

fn device(i: usize, piece: Piece, stats: &mut LayerStats) -> Result<Device, TargetError> {
    let Piece {
        mut params,
        mut layers,
    } = piece;
    params.allow(DEVICE_KEYS);
    let name = params.string("name")?;
    let name = params.required("name", name)?;
    let path = format!("device[{i}] ({name})");
    params.set_path(&path);
    layers
        .iter_mut()
        .for_each(|l| l.set_path(format!("{path}.layers")));
    let kind = params.string("backend")?;
    let kind = params.required("backend", kind)?;
    let parts = params.uint("split")?;
    let dev = build::backend(&kind, &mut params)?;
    params.finish()?;
    let whole = apply_layers(dev, &layers, stats, &name, None)?;
    let parts = match parts {
        None => None,
        Some(n) => {
            let n = u32::try_from(n).map_err(|_| params_err(&path, "split", "too large"))?;
            Some(split(whole.clone(), n).map_err(|m| params_err(&path, "split", m))?)
        }
    };
    Ok(Device { name, whole, parts })
}

fn params_err(path: &str, key: &str, msg: impl Into<String>) -> TargetError {
    TargetError::config(format!("{path}.{key}"), msg)
}

/// The export settings common to every export an entry makes.
struct ExportCommon {
    description: String,
    read_only: bool,
}

fn export(
    i: usize,
    piece: Piece,
    devices: &[Device],
    stats: &mut LayerStats,
    out: &mut Vec<Export>,
) -> Result<(), TargetError> {
    let Piece {
        mut params,
        mut layers,
    } = piece;
    params.allow(EXPORT_KEYS);
    let name = params.string("name")?;
    let name = params.required("name", name)?;
    let path = format!("export[{i}] ({name})");
    params.set_path(&path);
    layers
        .iter_mut()
        .for_each(|l| l.set_path(format!("{path}.layers")));
    let common = ExportCommon {
        description: params.string("description")?.unwrap_or_default(),
        read_only: params.bool("read_only")?.unwrap_or(false),
    };
    let (device_name, kind) = (params.string("device")?, params.string("backend")?);
    let bases = match (device_name, kind) {
        (Some(_), Some(_)) => {
            return Err(params.err("device", "give either device or backend, not both"))
        }
        (None, None) => {
            return Err(params.err("backend", "missing (or name a [[device]] with device = …)"))
        }
        (Some(d), None) => vec![(name.clone(), device_base(&mut params, devices, &d)?)],
        (None, Some(k)) => private_bases(&mut params, &name, &k)?,
    };
    let repeated = bases.len() > 1;
    for (j, (ename, dev)) in bases.into_iter().enumerate() {
        let dev = apply_layers(dev, &layers, stats, &ename, repeated.then_some(j))?;
        let e = Export::new(ename, dev)?.with_description(common.description.clone())?;
        out.push(e.with_read_only(common.read_only));
    }
    Ok(())
}

/// The device (or its part) an export refers to.
fn device_base(
    p: &mut Params,
    devices: &[Device],
    name: &str,
) -> Result<Arc<dyn BlockDev>, TargetError> {
    let part = p.uint("part")?;
    for k in ["count", "split"] {
        if p.has(k) {
            return Err(p.err(k, "not with device = …: set split on the [[device]]"));
        }
    }
    p.finish()?;
    let Some(d) = devices.iter().find(|d| d.name == name) else {
        return Err(p.err("device", format!("no [[device]] named '{name}'")));
    };
    match (&d.parts, part) {
        (None, None) => Ok(d.whole.clone()),
        (None, Some(_)) => Err(p.err("part", format!("device '{name}' is not split"))),
        (Some(parts), None) => Err(p.err(
            "part",
            format!("missing: device '{name}' is split in {}", parts.len()),
        )),
        (Some(parts), Some(k)) => parts.get(k as usize).cloned().ok_or_else(|| {
            p.err(
                "part",
                format!("{k} is not a part of '{name}' (0..{})", parts.len()),
            )
        }),
    }
}

/// An export's name and the device under its layers.
type NamedDev = (String, Arc<dyn BlockDev>);

/// The backends of an export entry with its own backend: one, `count`
/// separate ones, or one `split` in parts.
fn private_bases(p: &mut Params, name: &str, kind: &str) -> Result<Vec<NamedDev>, TargetError> {
    if p.has("part") {
        return Err(p.err("part", "only with device = …"));
    }
    let (count, parts) = (p.uint("count")?, p.uint("split")?);
    match (count, parts) {
        (Some(_), Some(_)) => Err(p.err("count", "give count or split, not both")),
        (Some(0), _) | (_, Some(0)) => Err(p.err(
            if count.is_some() { "count" } else { "split" },
            "must be at least 1",
        )),
        (Some(n), None) => {
            if kind == "file" && n > 1 {
                return Err(p.err("count", "a file backend cannot be repeated (every copy would be the same file); use split"));
            }
            let mut v = Vec::new();
            for j in 0..n {
                let mut pj = p.clone();
                v.push((format!("{name}{j}"), build::backend(kind, &mut pj)?));
                pj.finish()?;
            }
            Ok(v)
        }
        (None, Some(n)) => {
            let dev = build::backend(kind, p)?;
            p.finish()?;
            let n32 = u32::try_from(n).map_err(|_| p.err("split", "too large"))?;
            let parts = split(dev, n32).map_err(|m| p.err("split", m))?;
            Ok(parts
                .into_iter()
                .enumerate()
                .map(|(j, d)| (format!("{name}{j}"), d))
                .collect())
        }
        (None, None) => {
            let dev = build::backend(kind, p)?;
            p.finish()?;
            Ok(vec![(name.to_string(), dev)])
        }
    }
}

#[cfg(test)]
mod tests;
