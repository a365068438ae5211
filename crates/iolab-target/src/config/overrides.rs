//! A target from its two sources — a TOML text or compact `--export`
//! specs — with the command line's settings applied over it
//! ([`Overrides`]: `iolab target`'s flags). The Python binding only passes
//! the flags through; every check and every error is here, each naming the
//! flag it is about.

use iolab_core::units::{self, KB_BASE_DEFAULT};

use super::params::Value;
use super::{pacing, parse_compact_spec, RawConfig, TargetSpec};
use crate::error::TargetError;
use crate::server_config::MAX_REQUEST_LIMIT_BYTES;

/// Settings given on the command line, over those of the config.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `--unix PATH` (as `unix:PATH`) or `--tcp HOST:PORT`.
    pub listen: Option<String>,
    /// `--read-only`: every export read-only.
    pub read_only: bool,
    /// `--max-connections N`.
    pub max_connections: Option<usize>,
    /// `--max-request SIZE` (`48m`, `65536`): the largest payload, bytes.
    pub max_request: Option<String>,
    /// `--listen-any`: allow a non-loopback address.
    pub allow_remote: bool,
    /// `--pacing buffers=96,cache=6,…`.
    pub pacing: Option<String>,
    /// `--realtime`: serving threads under `SCHED_FIFO`.
    pub realtime: bool,
    /// `--conn-io auto|uring|threads`.
    pub conn_io: Option<String>,
    /// `--zero-copy auto|on|off`.
    pub zero_copy: Option<String>,
}

/// The config from `toml` or `exports` (exactly one of the two), with
/// `o` applied.
pub fn build(
    toml: Option<&str>,
    exports: &[String],
    o: &Overrides,
) -> Result<TargetSpec, TargetError> {
    let mut raw = match (toml, exports.is_empty()) {
        (Some(t), true) => RawConfig::from_toml(t)?,
        (None, false) => RawConfig {
            exports: exports
                .iter()
                .enumerate()
                .map(|(i, s)| parse_compact_spec(i, s))
                .collect::<Result<_, _>>()?,
            ..RawConfig::default()
        },
        (Some(_), false) => {
            return Err(TargetError::config(
                "--export",
                "give either a config file or --export specs, not both",
            ))
        }
        (None, true) => return Err(TargetError::config(
            "--export",
            "no exports: give --export NAME=BACKEND,… (e.g. disk=memory,size=1g) or --config FILE",
        )),
    };
    if o.read_only {
        for e in &mut raw.exports {
            e.params.insert("read_only", Value::Bool(true));
        }
    }
    let max_in_config = raw
        .server
        .as_ref()
        .is_some_and(|p| p.has("max_request_bytes"));
    let mut server = raw.server_settings()?;
    let s = &mut server;
    if let Some(l) = &o.listen {
        s.listen = l
            .parse()
            .map_err(|m: String| TargetError::config("--unix/--tcp", m))?;
    }
    s.allow_remote |= o.allow_remote;
    s.realtime |= o.realtime;
    if let Some(c) = &o.conn_io {
        s.conn_io = c
            .parse()
            .map_err(|m: String| TargetError::config("--conn-io", m))?;
    }
    if let Some(z) = &o.zero_copy {
        s.zero_copy = z
            .parse()
            .map_err(|m: String| TargetError::config("--zero-copy", m))?;
    }
    if let Some(n) = o.max_connections {
        s.max_connections = n;
    }
    if let Some(m) = &o.max_request {
        let v = units::parse_size(m, KB_BASE_DEFAULT)
            .map_err(|e| TargetError::config("--max-request", format!("'{m}': {e}")))?;
        if v > u64::from(MAX_REQUEST_LIMIT_BYTES) {
            let msg = format!("'{m}' is more than the target's limit of 64 MiB");
            return Err(TargetError::config("--max-request", msg));
        }
        s.max_request_bytes = v as u32;
    }
    if let Some(p) = &o.pacing {
        let p = pacing::parse_pacing_compact(p)?;
        pacing::apply(s, p, max_in_config || o.max_request.is_some());
    }
    // The flags are applied: check the settings, then build the devices (files).
    raw.build_with(server)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::ListenAddr;

    fn specs(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn flags_apply_over_the_config() {
        let o = Overrides {
            listen: Some("unix:/tmp/x.sock".into()),
            read_only: true,
            max_connections: Some(3),
            max_request: Some("48m".into()),
            realtime: true,
            ..Overrides::default()
        };
        let s = build(None, &specs(&["d=memory,size=1m"]), &o).unwrap();
        assert!(s.server.realtime);
        let toml = "[server]\nrealtime = true\n[[export]]\nname = \"d\"\nbackend = \"null\"\nsize = \"1m\"\n";
        let t = build(Some(toml), &[], &Overrides::default()).unwrap();
        assert!(t.server.realtime, "[server] realtime");
        assert_eq!(s.server.listen, ListenAddr::Unix("/tmp/x.sock".into()));
        assert_eq!(s.server.max_connections, 3);
        assert_eq!(s.server.max_request_bytes, 48 << 20);
        assert!(s.exports.get(0).unwrap().is_read_only());
    }

    #[test]
    fn conn_io_comes_from_the_flag_over_the_config_and_a_bad_value_names_its_key() {
        use crate::server_config::ConnIo;
        let toml = |v: &str| {
            format!("[server]\nconn_io = \"{v}\"\n[[export]]\nname = \"d\"\nbackend = \"null\"\nsize = \"1m\"\n")
        };
        let d = build(None, &specs(&["d=null,size=1m"]), &Overrides::default()).unwrap();
        assert_eq!(d.server.conn_io, ConnIo::Threads);
        let t = build(Some(&toml("auto")), &[], &Overrides::default()).unwrap();
        assert_eq!(t.server.conn_io, ConnIo::Auto);
        let o = Overrides {
            conn_io: Some("uring".into()),
            ..Overrides::default()
        };
        let f = build(Some(&toml("auto")), &[], &o).unwrap();
        assert_eq!(f.server.conn_io, ConnIo::Uring, "the flag wins");
        let e = build(Some(&toml("epoll")), &[], &Overrides::default()).unwrap_err();
        assert!(
            e.to_string().contains("conn_io") && e.to_string().contains("'epoll'"),
            "{e}"
        );
        let o = Overrides {
            conn_io: Some("fast".into()),
            ..Overrides::default()
        };
        let e = build(None, &specs(&["d=null,size=1m"]), &o).unwrap_err();
        let m = e.to_string();
        assert!(
            m.contains("--conn-io") && m.contains("auto, uring, threads"),
            "{m}"
        );
    }

    #[test]
    fn zero_copy_comes_from_the_flag_over_the_config_and_on_needs_a_unix_listener() {
        use crate::server_config::ZeroCopy;
        let toml = |v: &str| {
            format!("[server]\nzero_copy = \"{v}\"\n[[export]]\nname = \"d\"\nbackend = \"null\"\nsize = \"1m\"\n")
        };
        let d = build(None, &specs(&["d=null,size=1m"]), &Overrides::default()).unwrap();
        assert_eq!(d.server.zero_copy, ZeroCopy::Off);
        let t = build(Some(&toml("auto")), &[], &Overrides::default()).unwrap();
        assert_eq!(t.server.zero_copy, ZeroCopy::Auto);
        let o = |z: &str, listen: &str| Overrides {
            zero_copy: Some(z.into()),
            listen: Some(listen.into()),
            ..Overrides::default()
        };
        let f = build(Some(&toml("auto")), &[], &o("on", "unix:/tmp/x.sock")).unwrap();
        assert_eq!(f.server.zero_copy, ZeroCopy::On, "the flag wins");
        let e = build(Some(&toml("yes")), &[], &Overrides::default()).unwrap_err();
        assert!(
            e.to_string().contains("zero_copy") && e.to_string().contains("'yes'"),
            "{e}"
        );
        let e = build(Some(&toml("auto")), &[], &o("always", "unix:/tmp/x.sock")).unwrap_err();
        assert!(
            e.to_string().contains("--zero-copy") && e.to_string().contains("auto, on, off"),
            "{e}"
        );
        // The export-independent checks now run in build, before any device is made.
        let checked = |z: &str| {
            build(None, &specs(&["d=null,size=1m"]), &o(z, "127.0.0.1:0"))
                .and_then(|s| s.server.validate(&s.exports))
        };
        let e = checked("on").unwrap_err().to_string();
        assert!(
            e.contains("server.zero_copy") && e.contains("needs a Unix socket listener"),
            "{e}"
        );
        assert!(checked("auto").is_ok(), "auto with TCP copies");
    }

    #[test]
    fn a_refused_setting_creates_no_backing_file() {
        // Session 12: docs/target.md's complete example (max_request_bytes 64m under pacing)
        // was refused after its 3 GiB file had been created.
        let dir = tempfile::tempdir().unwrap();
        let img = dir.path().join("d.img");
        let toml = format!(
            "pacing = {{ buffers = 96, cache = 6, unit = \"128k\", export_limit = 32 }}\n\
             [server]\nmax_request_bytes = \"64m\"\n\
             [[export]]\nname = \"d\"\nbackend = \"file\"\npath = \"{}\"\nsize = \"64m\"\n",
            img.display()
        );
        let e = build(Some(&toml), &[], &Overrides::default()).unwrap_err();
        assert!(e.to_string().contains("server.max_request_bytes"), "{e}");
        assert!(
            !img.exists(),
            "the refused config created {}",
            img.display()
        );
        // The flag that fixes it is applied before the check: the same config then builds.
        let fixed = Overrides {
            max_request: Some("4m".into()),
            ..Overrides::default()
        };
        build(Some(&toml), &[], &fixed).unwrap();
        assert!(img.exists());
    }

    #[test]
    fn the_default_maximum_is_64_mib_and_pacing_lowers_it() {
        let s = build(None, &specs(&["d=null,size=1g"]), &Overrides::default()).unwrap();
        assert_eq!(s.server.max_request_bytes, 64 << 20);
        let o = Overrides {
            pacing: Some("buffers=8".into()),
            ..Overrides::default()
        };
        let s = build(None, &specs(&["d=null,size=1g"]), &o).unwrap();
        assert_eq!(s.server.max_request_bytes, 8 * (128 << 10));
    }

    #[test]
    fn errors_name_the_flag() {
        let e = |t: Option<&str>, x: &[&str], o: Overrides| {
            build(t, &specs(x), &o).unwrap_err().to_string()
        };
        let m = e(None, &[], Overrides::default());
        assert!(m.starts_with("--export: no exports"), "{m}");
        let m = e(Some(""), &["d=null,size=1m"], Overrides::default());
        assert!(m.contains("not both"), "{m}");
        let bad = Overrides {
            max_request: Some("48x".into()),
            ..Overrides::default()
        };
        let m = e(None, &["d=null,size=1m"], bad);
        assert!(m.starts_with("--max-request: '48x'"), "{m}");
        let big = Overrides {
            max_request: Some("128m".into()),
            ..Overrides::default()
        };
        let m = e(None, &["d=null,size=1m"], big.clone());
        assert_eq!(
            m,
            "--max-request: '128m' is more than the target's limit of 64 MiB"
        );
    }
}
