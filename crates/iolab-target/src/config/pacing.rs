//! The `pacing` settings, from TOML or the compact command-line form.
//!
//! ```toml
//! pacing = { buffers = 96, cache = 6, unit = "128k", export_limit = 32 }
//! ```
//! (equivalently a `[pacing]` table), or on the command line
//! `buffers=96,cache=6,unit=128k,export_limit=32`. `buffers` is required;
//! `cache` defaults to 0, `unit` to 128 KiB (SPDK's NVMf default I/O unit),
//! `export_limit` to none. See [`crate::pacing`] for what they do.
//!
//! With pacing, the largest request the target accepts is what one request
//! may hold (`unit` × min(`buffers`, `export_limit`)): when
//! `server.max_request_bytes` is not given it is lowered to that, and
//! advertised to clients; when it is given and larger, that is an error.

use super::params::{Params, Value};
use crate::error::TargetError;
use crate::pacing::{PacingParams, Retry};
use crate::server_config::ServerConfig;

/// Default size of one pacing buffer, bytes.
pub const DEFAULT_UNIT_BYTES: u64 = 128 << 10;

/// The keys of `pacing`.
pub const PACING_KEYS: &[&str] = &[
    "buffers",
    "cache",
    "unit",
    "export_limit",
    "groups",
    "retry",
];

/// Read the `pacing` keys.
pub fn pacing_params(mut p: Params) -> Result<PacingParams, TargetError> {
    p.refuse_unknown(PACING_KEYS)?;
    p.allow(PACING_KEYS);
    let buffers = p.uint("buffers")?;
    let buffers = p.required("buffers", buffers)?;
    let cache = p.uint("cache")?.unwrap_or(0);
    let unit = p.size("unit")?.unwrap_or(DEFAULT_UNIT_BYTES);
    let limit = p.uint("export_limit")?;
    let groups = p.uint("groups")?.unwrap_or(0);
    let retry = match p.string("retry")? {
        None => Retry::default(),
        Some(r) => Retry::parse(&r).map_err(|m| p.err("retry", m))?,
    };
    p.finish()?;
    let us = |k: &'static str, v: u64| usize::try_from(v).map_err(|_| p.err(k, "too large"));
    let params = PacingParams {
        buffers: us("buffers", buffers)?,
        cache: us("cache", cache)?,
        unit_bytes: us("unit", unit)?,
        export_limit: limit.map(|l| us("export_limit", l)).transpose()?,
        groups: us("groups", groups)?,
        retry,
    };
    params
        .validate()
        .map_err(|m| TargetError::config("pacing", m))?;
    Ok(params)
}

/// Parse the compact form `buffers=96,cache=6,unit=128k,export_limit=32`.
pub fn parse_pacing_compact(spec: &str) -> Result<PacingParams, TargetError> {
    let mut entries = Vec::new();
    for kv in spec.split(',').filter(|s| !s.is_empty()) {
        let Some((k, v)) = kv.split_once('=') else {
            return Err(TargetError::config(
                "pacing",
                format!("'{kv}' is not KEY=VALUE (e.g. buffers=96,cache=6,unit=128k)"),
            ));
        };
        entries.push((k.trim().to_string(), Value::Text(v.trim().to_string())));
    }
    pacing_params(Params::new("pacing", entries))
}

/// Turn pacing on in `server`, fitting the request size limit to it
/// (`max_request_explicit`: the limit was configured, so do not lower it;
/// the server's validation reports the conflict).
pub fn apply(server: &mut ServerConfig, p: PacingParams, max_request_explicit: bool) {
    if !max_request_explicit {
        let cap = u32::try_from(p.max_request_bytes()).unwrap_or(u32::MAX);
        server.max_request_bytes = server.max_request_bytes.min(cap);
    }
    server.pacing = Some(p);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse_toml;

    #[test]
    fn compact_and_toml_forms_agree() {
        let c = parse_pacing_compact(
            "buffers=96,cache=6,unit=128k,export_limit=32,groups=16,retry=same",
        )
        .unwrap();
        let want = PacingParams {
            buffers: 96,
            cache: 6,
            unit_bytes: 128 << 10,
            export_limit: Some(32),
            groups: 16,
            retry: Retry::Same,
        };
        assert_eq!(c, want);
        let t = parse_toml(
            "pacing = { buffers = 96, cache = 6, unit = \"128k\", export_limit = 32, groups = 16, retry = \"same\" }\n\
             [[export]]\nname = \"n\"\nbackend = \"null\"\nsize = \"1g\"\n",
        )
        .unwrap();
        assert_eq!(t.server.pacing, Some(want));
        // 32 buffers of 128 KiB: the most one request may hold.
        assert_eq!(t.server.max_request_bytes, 4 << 20);
    }

    #[test]
    fn errors_name_the_key() {
        let e = parse_pacing_compact("buffers=4,retry=spdk")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("pacing.retry") && e.contains("any or same"),
            "{e}"
        );
        let e = parse_pacing_compact("cache=6").unwrap_err().to_string();
        assert!(e.contains("pacing.buffers"), "{e}");
        let e = parse_pacing_compact("buffers=4,cache=9")
            .unwrap_err()
            .to_string();
        assert!(e.contains("pacing.cache"), "{e}");
        let e = parse_pacing_compact("buffers=4,colour=red")
            .unwrap_err()
            .to_string();
        assert!(e.contains("colour"), "{e}");
        let e = parse_toml(
            "pacing = { buffers = 4 }\n[server]\nmax_request_bytes = \"1m\"\n\
             [[export]]\nname = \"n\"\nbackend = \"null\"\nsize = \"1g\"\n",
        )
        .and_then(|s| s.bind())
        .unwrap_err()
        .to_string();
        assert!(e.contains("max_request_bytes"), "{e}");
    }
}
