//! `ioengine=nbd`: the `uri=` parser and the checks that tie `uri=` and
//! `nbd_connections=` to the engine (`finish` warns about
//! `nbd_connections=` on other engines).
//!
//! The URI forms are libnbd's (which fio's nbd engine passes through):
//! `nbd://host[:port][/export]` and `nbd+unix:///[export]?socket=PATH`.
//! Parsed by hand rather than with a URL crate: the grammar iolab accepts
//! is this small fixed subset, and what matters — which schemes and query
//! keys are refused, and why — would have to be written here anyway.

use std::path::PathBuf;

use super::draft::Draft;
use crate::engines::Target;
use crate::error::JobError;
use crate::job::{NbdAddr, NbdTarget};

/// The IANA port of NBD, used when `nbd://host/` names none.
pub const NBD_DEFAULT_PORT: u16 = 10809;

/// `uri=` → where the server is, and the export name.
pub fn parse_uri(text: &str) -> Result<(NbdAddr, String), String> {
    let text = text.trim();
    let Some((scheme, rest)) = text.split_once("://") else {
        return Err("expected nbd://host[:port]/export or nbd+unix:///export?socket=PATH".into());
    };
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (rest, None),
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, ""),
    };
    let export = percent_decode(path)?;
    match scheme {
        "nbd" => {
            if let Some(q) = query {
                return Err(format!("nbd:// takes no query ('?{q}'); a Unix socket is nbd+unix:///export?socket=PATH"));
            }
            Ok((tcp_addr(authority)?, export))
        }
        "nbd+unix" => {
            if !authority.is_empty() {
                return Err(format!("nbd+unix:// names no host (found '{authority}'); write nbd+unix:///export?socket=PATH"));
            }
            Ok((NbdAddr::Unix { socket: unix_socket(query)? }, export))
        }
        "nbds" | "nbds+unix" | "nbds+vsock" => Err(format!(
            "{scheme}:// needs TLS, which iolab's NBD client does not support; use nbd:// or nbd+unix://"
        )),
        "nbd+vsock" => Err("nbd+vsock:// is not supported; use nbd:// or nbd+unix://".into()),
        other => Err(format!(
            "unknown scheme '{other}'; expected nbd://host[:port]/export or nbd+unix:///export?socket=PATH"
        )),
    }
}

fn tcp_addr(authority: &str) -> Result<NbdAddr, String> {
    if authority.contains('@') {
        return Err("user names in the URI are not supported".into());
    }
    // [v6]:port, or host:port, or a bare host.
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, after) = v6
            .split_once(']')
            .ok_or("an IPv6 address must be closed with ']'")?;
        (h, after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err("nbd:// needs a host (nbd://host[:port]/export)".into());
    }
    let port = match port {
        None | Some("") => NBD_DEFAULT_PORT,
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|&p| p > 0)
            .ok_or_else(|| format!("port '{p}' is not a number from 1 to 65535"))?,
    };
    Ok(NbdAddr::Tcp {
        host: host.to_string(),
        port,
    })
}

fn unix_socket(query: Option<&str>) -> Result<PathBuf, String> {
    let mut socket = None;
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("socket", v)) if !v.is_empty() => {
                socket = Some(PathBuf::from(percent_decode(v)?))
            }
            _ => {
                return Err(format!(
                    "query '{pair}' is not supported; nbd+unix:// takes only socket=PATH"
                ))
            }
        }
    }
    socket.ok_or_else(|| "nbd+unix:// needs ?socket=PATH".into())
}

/// `%XX` escapes, as libnbd decodes export names and socket paths.
fn percent_decode(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3).unwrap_or("");
            let v = u8::from_str_radix(hex, 16)
                .map_err(|_| format!("bad escape '%{hex}' (expected %XX)"))?;
            out.push(v);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "escapes decode to invalid UTF-8".into())
}

/// The job's NBD target, or `None` for other engines (where `uri=` and
/// `nbd_connections=` are refused rather than ignored).
pub(super) fn target(d: &Draft) -> Result<Option<NbdTarget>, JobError> {
    if d.ioengine.caps().target != Target::NbdExport {
        // A uri= without ioengine=nbd is almost surely a forgotten engine.
        if d.explicit.contains("uri") {
            return Err(JobError::Conflict(format!(
                "uri= is only used by ioengine=nbd (this job uses ioengine={}); add ioengine=nbd",
                d.ioengine.name()
            )));
        }
        return Ok(None);
    }
    let Some(uri) = &d.uri else {
        return Err(JobError::BadForm {
            option: "uri".into(),
            reason: "is required with ioengine=nbd (nbd://host[:port]/export or \
                     nbd+unix:///export?socket=PATH)"
                .into(),
        });
    };
    for opt in ["filename", "directory"] {
        if d.explicit.contains(opt) {
            return Err(JobError::Conflict(format!(
                "ioengine=nbd does I/O on the export named by uri=, not on files; drop {opt}="
            )));
        }
    }
    let (addr, export) = parse_uri(uri).map_err(|reason| JobError::InvalidValue {
        option: "uri".into(),
        value: uri.clone(),
        reason,
    })?;
    Ok(Some(NbdTarget {
        uri: uri.trim().to_string(),
        addr,
        export,
        // More connections than iodepth would sit idle (finish warns).
        connections: d.nbd_connections.min(d.iodepth.max(1)),
    }))
}
