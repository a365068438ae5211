//! Reading a config into [`RawConfig`]: TOML (the `toml` crate parses;
//! this file walks the tables and keeps each key's path for errors), and
//! the compact command-line form.

use super::params::{Params, Value};
use super::Piece;
use crate::error::TargetError;

/// The top-level keys of a TOML config.
pub const TOP_LEVEL_KEYS: &[&str] = &["server", "pacing", "device", "export"];

/// The keys of `[server]`.
pub const SERVER_KEYS: &[&str] = &[
    "listen",
    "allow_remote",
    "max_connections",
    "workers",
    "max_inflight",
    "max_inflight_bytes",
    "max_request_bytes",
    "handshake_timeout",
    "shutdown_grace",
    "realtime",
    "conn_io",
    "zero_copy",
];

/// The keys of an `[[export]]` (besides its backend's, when it has one).
pub const EXPORT_KEYS: &[&str] = &[
    "name",
    "description",
    "read_only",
    "device",
    "part",
    "backend",
    "count",
    "split",
    "layers",
];

/// The keys of a `[[device]]` (besides its backend's).
pub const DEVICE_KEYS: &[&str] = &["name", "backend", "split", "layers"];

/// The key every layer has (besides its own, in [`super::build::LAYERS`]).
pub const LAYER_KEYS: &[&str] = &["type"];

/// A config before anything is built.
#[derive(Debug, Default)]
pub struct RawConfig {
    pub server: Option<Params>,
    /// The `pacing` table (see `config::pacing`).
    pub pacing: Option<Params>,
    pub devices: Vec<Piece>,
    pub exports: Vec<Piece>,
}

fn cfg_err(key: impl Into<String>, msg: impl Into<String>) -> TargetError {
    TargetError::config(key, msg)
}

impl RawConfig {
    /// Parse TOML text (syntax errors carry the line and column).
    pub fn from_toml(text: &str) -> Result<RawConfig, TargetError> {
        let doc: toml::Table =
            text.parse()
                .map_err(|e: toml::de::Error| TargetError::ConfigFile {
                    path: "config".into(),
                    msg: e.to_string(),
                })?;
        let mut raw = RawConfig::default();
        for (key, value) in doc {
            match (key.as_str(), value) {
                ("server", toml::Value::Table(t)) => raw.server = Some(params_of("server", t)?),
                ("pacing", toml::Value::Table(t)) => raw.pacing = Some(params_of("pacing", t)?),
                ("pacing", _) => {
                    return Err(cfg_err(
                        "pacing",
                        "must be a table: pacing = { buffers = 96 }",
                    ))
                }
                ("device", toml::Value::Array(a)) => raw.devices = pieces("device", a)?,
                ("export", toml::Value::Array(a)) => raw.exports = pieces("export", a)?,
                ("server", _) => return Err(cfg_err("server", "must be a table: [server]")),
                ("device" | "export", _) => {
                    return Err(cfg_err(
                        &key,
                        format!("must be an array of tables: [[{key}]]"),
                    ));
                }
                _ => {
                    return Err(cfg_err(
                        &key,
                        format!(
                            "unknown top-level key (known: {})",
                            TOP_LEVEL_KEYS.join(", ")
                        ),
                    ))
                }
            }
        }
        Ok(raw)
    }
}

fn pieces(what: &str, items: Vec<toml::Value>) -> Result<Vec<Piece>, TargetError> {
    items
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            let path = format!("{what}[{i}]");
            let toml::Value::Table(mut t) = v else {
                return Err(cfg_err(path, "must be a table"));
            };
            let layers = match t.remove("layers") {
                None => Vec::new(),
                Some(toml::Value::Array(a)) => layer_params(&path, a)?,
                Some(_) => {
                    return Err(cfg_err(
                        format!("{path}.layers"),
                        "must be an array of tables",
                    ))
                }
            };
            Ok(Piece {
                params: params_of(&path, t)?,
                layers,
            })
        })
        .collect()
}

fn layer_params(path: &str, items: Vec<toml::Value>) -> Result<Vec<Params>, TargetError> {
    items
        .into_iter()
        .enumerate()
        .map(|(j, v)| match v {
            toml::Value::Table(t) => params_of(&format!("{path}.layers[{j}]"), t),
            _ => Err(cfg_err(
                format!("{path}.layers[{j}]"),
                "must be a table like { type = \"delay\", read = \"1ms\" }",
            )),
        })
        .collect()
}

fn params_of(path: &str, t: toml::Table) -> Result<Params, TargetError> {
    let entries = t
        .into_iter()
        .map(|(k, v)| value_of(&format!("{path}.{k}"), v).map(|v| (k, v)))
        .collect::<Result<_, _>>()?;
    Ok(Params::new(path, entries))
}

fn value_of(key: &str, v: toml::Value) -> Result<Value, TargetError> {
    Ok(match v {
        toml::Value::String(s) => Value::Text(s),
        toml::Value::Integer(i) => Value::Int(i),
        toml::Value::Float(f) => Value::Float(f),
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Array(a) => Value::List(
            a.into_iter()
                .map(|x| value_of(key, x))
                .collect::<Result<_, _>>()?,
        ),
        toml::Value::Datetime(_) => return Err(cfg_err(key, "a date is not a valid value here")),
        toml::Value::Table(_) => return Err(cfg_err(key, "a table is not a valid value here")),
    })
}

/// Parse one compact export spec `NAME=BACKEND[,K=V…][+LAYER[,K=V…]…]`
/// (the `index`-th on the command line).
pub fn parse_compact_spec(index: usize, spec: &str) -> Result<Piece, TargetError> {
    let path = format!("export[{index}]");
    let bad = |msg: String| cfg_err(&path, format!("'{spec}': {msg}"));
    let Some((name, rest)) = spec.split_once('=') else {
        return Err(bad(
            "expected NAME=BACKEND[,KEY=VALUE…][+LAYER[,KEY=VALUE…]…]".into(),
        ));
    };
    if name.contains([',', '+']) {
        return Err(bad(format!(
            "the export name is missing: write NAME={spec} (e.g. disk={spec})"
        )));
    }
    let mut groups = split_top(rest, '+').into_iter();
    let (backend, mut entries) = group(groups.next().unwrap_or_default()).map_err(&bad)?;
    entries.insert(0, ("backend".into(), Value::Text(backend)));
    entries.insert(0, ("name".into(), Value::Text(name.trim().to_string())));
    let layers = groups
        .enumerate()
        .map(|(j, g)| {
            let (kind, mut kv) = group(g).map_err(&bad)?;
            kv.insert(0, ("type".into(), Value::Text(kind)));
            Ok(Params::new(format!("{path}.layers[{j}]"), kv))
        })
        .collect::<Result<_, TargetError>>()?;
    Ok(Piece {
        params: Params::new(path.clone(), entries),
        layers,
    })
}

/// `TYPE,K=V,K=V` → (TYPE, entries).
fn group(g: &str) -> Result<(String, Vec<(String, Value)>), String> {
    let mut items = split_top(g, ',').into_iter().map(str::trim);
    let kind = items.next().unwrap_or_default().to_string();
    if kind.is_empty() || kind.contains('=') {
        return Err(format!("'{g}' must start with a backend or layer name"));
    }
    let kv = items
        .map(|item| match item.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                Ok((k.trim().to_string(), Value::Text(v.trim().to_string())))
            }
            _ => Err(format!("'{item}' is not KEY=VALUE")),
        })
        .collect::<Result<_, _>>()?;
    Ok((kind, kv))
}

/// Split `s` at `sep` outside parentheses (a RAID member spec such as
/// `member=sim-hdd(wcache=off,size=64g)` keeps its commas).
fn split_top(s: &str, sep: char) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            c if c == sep && depth == 0 => {
                out.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}
