//! The stats endpoint: a small HTTP server on its own (loopback) port.
//!
//! - `GET /stats` — the current window as JSON ([`crate::metrics::stats_json`]);
//!   `GET /stats?reset=1` also starts a new window.
//! - `POST /reset` — snapshot and start a new window in one step (the
//!   counters are swapped, not read then cleared, so no I/O falls between
//!   two windows); answers the finished window's JSON. A client run
//!   brackets its measured window with a reset before and one after.
//! - `GET /metrics` — Prometheus text ([`crate::metrics::prometheus`]):
//!   latency histograms; quantile summaries too when started with
//!   `summaries` ([`StatsHttp::start_with`], `--metrics-summaries`).
//! - `POST /member?export=NAME&member=I&state=failed|working` — fail a
//!   RAID member or restore it (rebuilt first) while serving: the member
//!   control plane, its own handle ([`MemberControl`], not the stats);
//!   409 with the reason when refused.
//!
//! HTTP parsing is tiny_http's: this is a measurement side door, not a
//! web server, and a crate handles the protocol's corner cases for us.

use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;

use tiny_http::{Header, Method, Request, Response};

use crate::control::MemberControl;
use crate::error::TargetError;
use crate::metrics::{prometheus, stats_json};
use crate::stats::Stats;

/// A running stats endpoint; stops when dropped.
pub struct StatsHttp {
    server: Arc<tiny_http::Server>,
    addr: SocketAddr,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for StatsHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StatsHttp({})", self.addr)
    }
}

impl StatsHttp {
    /// Listen on `addr` (loopback unless `allow_remote`) and serve
    /// `stats` and the member control plane `members`.
    pub fn start(
        addr: SocketAddr,
        allow_remote: bool,
        stats: Arc<Stats>,
        members: Arc<MemberControl>,
    ) -> Result<StatsHttp, TargetError> {
        Self::start_with(addr, allow_remote, stats, members, false)
    }

    /// [`StatsHttp::start`], and `/metrics` also writes the quantile
    /// summaries beside the histograms when `summaries`.
    pub fn start_with(
        addr: SocketAddr,
        allow_remote: bool,
        stats: Arc<Stats>,
        members: Arc<MemberControl>,
        summaries: bool,
    ) -> Result<StatsHttp, TargetError> {
        if !allow_remote && !addr.ip().is_loopback() {
            return Err(TargetError::config(
                "stats_http",
                format!(
                    "{addr} is not a loopback address; to serve other hosts pass --listen-any \
                     (allow_remote = true under [server] in a config file)"
                ),
            ));
        }
        let server = tiny_http::Server::http(addr).map_err(|e| {
            TargetError::io(
                format!("stats endpoint on {addr}"),
                std::io::Error::other(e),
            )
        })?;
        let addr = server
            .server_addr()
            .to_ip()
            .expect("bound to an IP address");
        let server = Arc::new(server);
        let srv = server.clone();
        let thread = std::thread::Builder::new()
            .name("iolab-stats-http".into())
            .spawn(move || {
                for req in srv.incoming_requests() {
                    handle(req, &stats, &members, summaries);
                }
            })
            .map_err(|e| TargetError::io("start the stats endpoint thread", e))?;
        Ok(StatsHttp {
            server,
            addr,
            thread: Some(thread),
        })
    }

    /// Where it listens (the real port when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stop serving and wait for the thread.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for StatsHttp {
    fn drop(&mut self) {
        self.halt();
    }
}

fn header(k: &str, v: &str) -> Header {
    Header::from_bytes(k, v).expect("static header is valid")
}

fn handle(req: Request, stats: &Stats, members: &MemberControl, summaries: bool) {
    let url = req.url().to_string();
    let (path, query) = url.split_once('?').unwrap_or((&url, ""));
    let reset_asked = query
        .split('&')
        .any(|kv| kv == "reset=1" || kv == "reset=true");
    let (code, body, ctype) = match (req.method(), path) {
        (Method::Get, "/stats") => json_reply(stats, reset_asked),
        (Method::Post, "/reset") => json_reply(stats, true),
        (Method::Post, "/member") => member_reply(members, query),
        (Method::Get, "/metrics") => match stats.snapshot() {
            Ok(s) => (200, prometheus(&s, summaries), "text/plain; version=0.0.4"),
            Err(e) => (500, format!("{e}\n"), "text/plain"),
        },
        (_, "/stats" | "/reset" | "/metrics") => (
            405,
            "use GET /stats, GET /metrics or POST /reset\n".into(),
            "text/plain",
        ),
        _ => (
            404,
            "not found: try /stats, /metrics or POST /reset\n".into(),
            "text/plain",
        ),
    };
    // One Content-Length reply, never chunked: /metrics with its
    // histograms outgrows tiny_http's 32 KiB chunking threshold, and simple
    // clients (ours, curl | grep) read a plain body.
    let resp = Response::from_string(body)
        .with_chunked_threshold(usize::MAX)
        .with_status_code(code)
        .with_header(header("Content-Type", ctype));
    // A client that went away is its own problem; the endpoint goes on.
    let _ = req.respond(resp);
}

/// `POST /member?export=NAME&member=I&state=failed|working`: fail a RAID
/// member, or restore it (rebuilt first), while serving (stack/raid/live.rs).
fn member_reply(members: &MemberControl, query: &str) -> (u16, String, &'static str) {
    let get = |k: &str| {
        query
            .split('&')
            .find_map(|kv| kv.strip_prefix(k)?.strip_prefix('='))
    };
    let usage = "POST /member?export=NAME&member=INDEX&state=failed|working";
    let (Some(export), Some(member), Some(state)) = (get("export"), get("member"), get("state"))
    else {
        return (
            400,
            format!("{usage}: export, member and state are required\n"),
            "text/plain",
        );
    };
    let Ok(member) = member.parse::<usize>() else {
        return (
            400,
            format!("member '{member}' is not an index; {usage}\n"),
            "text/plain",
        );
    };
    let failed = match state {
        "failed" => true,
        "working" => false,
        _ => {
            return (
                400,
                format!("state '{state}' is not failed or working; {usage}\n"),
                "text/plain",
            )
        }
    };
    match members.set_member_failed(export, member, failed) {
        Ok(msg) => (200, format!("{msg}\n"), "text/plain"),
        Err(e) => (409, format!("{e}\n"), "text/plain"),
    }
}

fn json_reply(stats: &Stats, reset: bool) -> (u16, String, &'static str) {
    let snap = if reset {
        stats.snapshot_and_reset()
    } else {
        stats.snapshot()
    };
    match snap {
        Ok(s) => (200, stats_json(&s).to_string(), "application/json"),
        Err(e) => (500, format!("{e}\n"), "text/plain"),
    }
}
