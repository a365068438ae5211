//! The parameters of one piece of a config (the server, an export, a
//! backend, a layer), from a TOML table or from `key=value` pairs of the
//! compact command-line form, with typed getters whose errors name the key.
//!
//! Each piece takes the keys it knows ([`Params::size`],
//! [`Params::duration`], …) and then calls [`Params::finish`], which
//! refuses any key left over and lists the ones the piece accepts — no
//! setting is silently ignored. Values are read the way iolab reads fio's
//! options ([`iolab_core::units`]): sizes `4096`, `4k`, `1g` (k = 1024),
//! durations with a unit (`250us`, `1ms`, `2s`), fractions `0.01` or `1%`.
//! In the compact form every value is text and a list is written with
//! `:` between items (`ops=read:write`).

use std::time::Duration;

use iolab_core::units::{self, KB_BASE_DEFAULT};

use crate::error::TargetError;

/// A parameter value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Text(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    List(Vec<Value>),
}

impl Value {
    fn describe(&self) -> String {
        match self {
            Value::Text(s) => format!("'{s}'"),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => f.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::List(v) => format!("a list of {}", v.len()),
        }
    }
}

/// The keys and values of one piece, and where it sits in the config.
#[derive(Debug, Clone)]
pub struct Params {
    path: String,
    entries: Vec<(String, Value)>,
    asked: Vec<&'static str>,
    /// The key table(s) of this piece (empty: not declared yet).
    allowed: Vec<&'static str>,
}

impl Params {
    /// `path` names the piece in errors, e.g. `export[0] (disk0)`.
    pub fn new(path: impl Into<String>, entries: Vec<(String, Value)>) -> Params {
        Params {
            path: path.into(),
            entries,
            asked: Vec::new(),
            allowed: Vec::new(),
        }
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    /// Rename the piece in errors (once its name is known).
    pub fn set_path(&mut self, path: impl Into<String>) {
        self.path = path.into();
    }

    /// Set `key` (replacing any value it had).
    pub fn insert(&mut self, key: &str, v: Value) {
        self.entries.retain(|(k, _)| k != key);
        self.entries.push((key.to_string(), v));
    }

    /// An error about `key` of this piece.
    pub fn err(&self, key: &str, msg: impl Into<String>) -> TargetError {
        TargetError::config(format!("{}.{key}", self.path), msg)
    }

    /// Declare keys of this piece's table: from then on, reading a key in
    /// no declared table is a bug caught in debug builds (the tables are
    /// what docs/target.md is checked against).
    pub fn allow(&mut self, keys: &[&'static str]) {
        self.allowed.extend_from_slice(keys);
    }

    /// Remove and return `key`'s raw value.
    pub fn take(&mut self, key: &'static str) -> Option<Value> {
        debug_assert!(
            self.allowed.is_empty() || self.allowed.contains(&key),
            "{}: key '{key}' is read but missing from its key table",
            self.path
        );
        self.asked.push(key);
        let i = self.entries.iter().position(|(k, _)| k == key)?;
        Some(self.entries.remove(i).1)
    }

    /// Whether `key` is present (without taking it).
    pub fn has(&self, key: &str) -> bool {
        self.entries.iter().any(|(k, _)| k == key)
    }

    fn text(&self, key: &str, v: Value, what: &str) -> Result<String, TargetError> {
        match v {
            Value::Text(s) => Ok(s),
            Value::Int(i) => Ok(i.to_string()),
            Value::Float(f) => Ok(f.to_string()),
            other => Err(self.err(key, format!("expected {what}, got {}", other.describe()))),
        }
    }

    pub fn string(&mut self, key: &'static str) -> Result<Option<String>, TargetError> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::Text(s)) => Ok(Some(s)),
            Some(v) => Err(self.err(key, format!("expected text, got {}", v.describe()))),
        }
    }

    /// A size in bytes (`4096`, `4k`, `1g`).
    pub fn size(&mut self, key: &'static str) -> Result<Option<u64>, TargetError> {
        let Some(v) = self.take(key) else {
            return Ok(None);
        };
        let s = self.text(key, v, "a size like 4k or 1g")?;
        units::parse_size(&s, KB_BASE_DEFAULT)
            .map(Some)
            .map_err(|e| self.err(key, format!("'{s}': {e}")))
    }

    /// A whole number.
    pub fn uint(&mut self, key: &'static str) -> Result<Option<u64>, TargetError> {
        let Some(v) = self.take(key) else {
            return Ok(None);
        };
        let s = self.text(key, v, "a whole number")?;
        units::parse_uint(&s)
            .map(Some)
            .map_err(|e| self.err(key, format!("'{s}': {e}")))
    }

    /// A duration; a unit is required (a bare number is ambiguous) except for 0.
    pub fn duration(&mut self, key: &'static str) -> Result<Option<Duration>, TargetError> {
        let Some(v) = self.take(key) else {
            return Ok(None);
        };
        let s = self.text(key, v, "a duration like 500us or 1ms")?;
        if s.trim() != "0" && s.trim().chars().all(|c| c.is_ascii_digit()) {
            return Err(self.err(key, format!("'{s}' has no unit; write e.g. {s}us or {s}ms")));
        }
        let ns = units::parse_time_ns(&s, 1).map_err(|e| self.err(key, format!("'{s}': {e}")))?;
        Ok(Some(Duration::from_nanos(ns)))
    }

    /// A fraction 0..=1: `0.01` or `1%`.
    pub fn fraction(&mut self, key: &'static str) -> Result<Option<f64>, TargetError> {
        let Some(v) = self.take(key) else {
            return Ok(None);
        };
        let f = match v {
            Value::Float(f) => f,
            Value::Int(i) => i as f64,
            other => {
                let s = self.text(key, other, "a fraction like 0.01 or 1%")?;
                let (num, pct) = match s.trim().strip_suffix('%') {
                    Some(n) => (n.to_string(), true),
                    None => (s.clone(), false),
                };
                let f = units::parse_float(&num).map_err(|e| self.err(key, e))?;
                if pct {
                    f / 100.0
                } else {
                    f
                }
            }
        };
        if !(0.0..=1.0).contains(&f) {
            return Err(self.err(key, format!("{f} is not between 0 and 1 (0% and 100%)")));
        }
        Ok(Some(f))
    }

    pub fn bool(&mut self, key: &'static str) -> Result<Option<bool>, TargetError> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(b)),
            Some(Value::Text(s)) => units::parse_bool(Some(&s))
                .map(Some)
                .map_err(|e| self.err(key, e)),
            Some(v) => Err(self.err(key, format!("expected true or false, got {}", v.describe()))),
        }
    }

    /// A list of texts (a TOML array, or `a:b:c` in the compact form).
    pub fn list(&mut self, key: &'static str) -> Result<Option<Vec<String>>, TargetError> {
        let items = match self.take(key) {
            None => return Ok(None),
            Some(Value::List(v)) => v,
            Some(Value::Text(s)) => s
                .split(':')
                .map(|p| Value::Text(p.trim().to_string()))
                .collect(),
            Some(v) => vec![v],
        };
        items
            .into_iter()
            .map(|v| self.text(key, v, "a list of values"))
            .collect::<Result<_, _>>()
            .map(Some)
    }

    /// A list of sizes (offsets).
    pub fn sizes(&mut self, key: &'static str) -> Result<Option<Vec<u64>>, TargetError> {
        let Some(items) = self.list(key)? else {
            return Ok(None);
        };
        let parse = |s: &String| {
            units::parse_size(s, KB_BASE_DEFAULT).map_err(|e| self.err(key, format!("'{s}': {e}")))
        };
        items.iter().map(parse).collect::<Result<_, _>>().map(Some)
    }

    /// A required value.
    pub fn required<T>(&self, key: &'static str, v: Option<T>) -> Result<T, TargetError> {
        v.ok_or_else(|| self.err(key, "missing (required)"))
    }

    /// The keys asked for so far, in order.
    pub fn asked(&self) -> &[&'static str] {
        &self.asked
    }

    /// Refuse any key not in `known` (before reading any), listing them.
    pub fn refuse_unknown(&self, known: &[&str]) -> Result<(), TargetError> {
        let Some((key, _)) = self
            .entries
            .iter()
            .find(|(k, _)| !known.contains(&k.as_str()))
        else {
            return Ok(());
        };
        let mut known = known.to_vec();
        known.sort_unstable();
        Err(TargetError::config(
            format!("{}.{key}", self.path),
            format!("unknown key (known here: {})", known.join(", ")),
        ))
    }

    /// Refuse keys nobody took, naming the ones this piece accepts.
    pub fn finish(&self) -> Result<(), TargetError> {
        let Some((key, _)) = self.entries.first() else {
            return Ok(());
        };
        let mut known = self.asked.clone();
        known.sort_unstable();
        known.dedup();
        Err(TargetError::config(
            format!("{}.{key}", self.path),
            format!("unknown key (known here: {})", known.join(", ")),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pairs: &[(&str, Value)]) -> Params {
        Params::new(
            "x",
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    fn t(s: &str) -> Value {
        Value::Text(s.into())
    }

    #[test]
    fn typed_getters_accept_text_and_native_values() {
        let mut ps = p(&[
            ("size", t("1g")),
            ("n", Value::Int(7)),
            ("d", t("250us")),
            ("r", t("1%")),
            ("f", Value::Float(0.5)),
            ("b", t("1")),
            ("ops", t("read:write")),
            ("at", Value::List(vec![Value::Int(4096), t("8k")])),
        ]);
        assert_eq!(ps.size("size").unwrap(), Some(1 << 30));
        assert_eq!(ps.uint("n").unwrap(), Some(7));
        assert_eq!(ps.duration("d").unwrap(), Some(Duration::from_micros(250)));
        assert_eq!(ps.fraction("r").unwrap(), Some(0.01));
        assert_eq!(ps.fraction("f").unwrap(), Some(0.5));
        assert_eq!(ps.bool("b").unwrap(), Some(true));
        assert_eq!(ps.list("ops").unwrap().unwrap(), ["read", "write"]);
        assert_eq!(ps.sizes("at").unwrap().unwrap(), [4096, 8192]);
        assert_eq!(ps.size("missing").unwrap(), None);
        ps.finish().unwrap();
    }

    #[test]
    fn errors_name_the_key_and_the_problem() {
        let e = p(&[("read", t("1"))])
            .duration("read")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("x.read:") && e.contains("no unit"), "{e}");
        let e = p(&[("size", t("1x"))])
            .size("size")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("x.size") && e.contains("unknown size unit"),
            "{e}"
        );
        let e = p(&[("rate", t("150%"))])
            .fraction("rate")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not between 0 and 1"), "{e}");
        let e = p(&[("size", Value::Bool(true))])
            .size("size")
            .unwrap_err()
            .to_string();
        assert!(e.contains("expected a size"), "{e}");
    }

    #[test]
    fn leftover_keys_are_refused_with_the_known_ones() {
        let mut ps = p(&[("size", t("1k")), ("sise", t("2k"))]);
        ps.size("size").unwrap();
        ps.bool("direct").unwrap();
        let e = ps.finish().unwrap_err().to_string();
        assert_eq!(e, "x.sise: unknown key (known here: direct, size)");
    }
}
