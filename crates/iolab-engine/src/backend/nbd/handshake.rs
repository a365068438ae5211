//! Connecting to an NBD server and the fixed newstyle handshake: client
//! flags (FIXED_NEWSTYLE, NO_ZEROES when offered), `NBD_OPT_GO` with the
//! export name, falling back to `NBD_OPT_EXPORT_NAME` when the server
//! answers `NBD_REP_ERR_UNSUP`. Blocking, with a timeout, in the worker's
//! set-up (and in the run's probe of the export's size).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use iolab_core::job::{NbdAddr, NbdTarget};

use super::wire::*;

/// How long connecting and the handshake may take before the run gives up.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// What the server told us about the export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportInfo {
    pub size_bytes: u64,
    pub flags: u16,
}

/// A connected socket, past the handshake, in blocking mode.
#[derive(Debug)]
pub struct Connected {
    pub fd: OwnedFd,
    pub info: ExportInfo,
}

/// An error for the user: what failed, naming the URI and the export.
pub fn err(t: &NbdTarget, what: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("{} (export '{}'): {what}", t.uri, t.export))
}

/// No server at `t`'s address (`listen`: the `iolab target` option that
/// would serve it): what failed, and what to start there.
fn unreachable(t: &NbdTarget, listen: &str, e: io::Error) -> io::Error {
    let (_, at) = listen.split_once(' ').unwrap_or(("", listen));
    let name = if t.export.is_empty() { "d" } else { &t.export };
    err(
        t,
        format!(
            "cannot connect to {at}: {e}; start an NBD server there first (iolab's own: iolab target {listen} \
             --export '{name}=memory,size=1g' &) or correct --uri"
        ),
    )
}

/// Connect and negotiate the export of `t`.
pub fn connect(t: &NbdTarget) -> io::Result<Connected> {
    match &t.addr {
        NbdAddr::Unix { socket } => {
            let s = UnixStream::connect(socket)
                .map_err(|e| unreachable(t, &format!("--unix {}", socket.display()), e))?;
            handshake(s, t, |s, d| {
                s.set_read_timeout(d)?;
                s.set_write_timeout(d)
            })
        }
        NbdAddr::Tcp { host, port } => {
            let s = TcpStream::connect((host.as_str(), *port))
                .map_err(|e| unreachable(t, &format!("--tcp {host}:{port}"), e))?;
            // Requests are small and latency is what is measured.
            s.set_nodelay(true)?;
            handshake(s, t, |s, d| {
                s.set_read_timeout(d)?;
                s.set_write_timeout(d)
            })
        }
    }
}

/// Negotiate on a connected socket under [`HANDSHAKE_TIMEOUT`], then leave
/// it blocking without a timeout. `set_timeouts` is the socket type's own
/// (std has no trait for it).
fn handshake<S>(
    s: S,
    t: &NbdTarget,
    set_timeouts: fn(&S, Option<Duration>) -> io::Result<()>,
) -> io::Result<Connected>
where
    S: Into<OwnedFd>,
    for<'a> &'a S: Read + Write,
{
    set_timeouts(&s, Some(HANDSHAKE_TIMEOUT))?;
    let info = negotiate(&mut &s, t)?;
    set_timeouts(&s, None)?;
    Ok(Connected { fd: s.into(), info })
}

/// Leave politely (NBD_CMD_DISC), as the run's probe connection does.
pub fn disconnect(c: Connected) {
    let mut req = Vec::with_capacity(REQUEST_BYTES);
    put_request(&mut req, 0, cmd::DISC, 0, 0, 0);
    // Best effort: the server may already be gone, which the probe's
    // caller learns soon enough from the workers' own connections.
    let _ = rustix::net::send(&c.fd, &req, rustix::net::SendFlags::NOSIGNAL);
}

fn read_u64(s: &mut impl Read) -> io::Result<u64> {
    let mut b = [0u8; 8];
    s.read_exact(&mut b)?;
    Ok(u64::from_be_bytes(b))
}

fn read_u32(s: &mut impl Read) -> io::Result<u32> {
    let mut b = [0u8; 4];
    s.read_exact(&mut b)?;
    Ok(u32::from_be_bytes(b))
}

fn read_u16(s: &mut impl Read) -> io::Result<u16> {
    let mut b = [0u8; 2];
    s.read_exact(&mut b)?;
    Ok(u16::from_be_bytes(b))
}

/// The handshake; every failure names the URI and export.
fn negotiate<S: Read + Write>(s: &mut S, t: &NbdTarget) -> io::Result<ExportInfo> {
    let on_io = |e: io::Error| err(t, format!("handshake failed: {e}"));
    if read_u64(s).map_err(on_io)? != NBDMAGIC || read_u64(s).map_err(on_io)? != IHAVEOPT {
        return Err(err(t, "not an NBD server speaking the newstyle protocol"));
    }
    let hflags = read_u16(s).map_err(on_io)?;
    if hflags & FLAG_FIXED_NEWSTYLE == 0 {
        return Err(err(
            t,
            "the server does not offer fixed newstyle negotiation",
        ));
    }
    let no_zeroes = hflags & FLAG_NO_ZEROES != 0;
    let cflags = FLAG_C_FIXED_NEWSTYLE | if no_zeroes { FLAG_C_NO_ZEROES } else { 0 };
    s.write_all(&cflags.to_be_bytes()).map_err(on_io)?;
    let name = t.export.as_bytes();
    let mut data = Vec::with_capacity(name.len() + 6);
    data.extend_from_slice(&(name.len() as u32).to_be_bytes());
    data.extend_from_slice(name);
    data.extend_from_slice(&0u16.to_be_bytes()); // no NBD_INFO requests
    send_option(s, opt::GO, &data).map_err(on_io)?;
    match go_replies(s, t)? {
        Some(info) => Ok(info),
        None => export_name(s, t, no_zeroes),
    }
}

fn send_option(s: &mut impl Write, opt: u32, data: &[u8]) -> io::Result<()> {
    let mut b = Vec::with_capacity(16 + data.len());
    b.extend_from_slice(&IHAVEOPT.to_be_bytes());
    b.extend_from_slice(&opt.to_be_bytes());
    b.extend_from_slice(&(data.len() as u32).to_be_bytes());
    b.extend_from_slice(data);
    s.write_all(&b)
}

/// Replies to OPT_GO until ACK: the export's info, or `None` when the
/// server does not know OPT_GO (answering ERR_UNSUP).
fn go_replies(s: &mut impl Read, t: &NbdTarget) -> io::Result<Option<ExportInfo>> {
    let on_io = |e: io::Error| err(t, format!("handshake failed during NBD_OPT_GO: {e}"));
    let mut info = None;
    loop {
        let magic = read_u64(s).map_err(on_io)?;
        let opt = read_u32(s).map_err(on_io)?;
        let rtype = read_u32(s).map_err(on_io)?;
        let len = read_u32(s).map_err(on_io)?;
        if magic != OPT_REPLY_MAGIC || opt != opt::GO {
            return Err(err(t, "malformed option reply to NBD_OPT_GO"));
        }
        if len > 1 << 20 {
            return Err(err(t, format!("option reply of {len} bytes is too long")));
        }
        let mut data = vec![0u8; len as usize];
        s.read_exact(&mut data).map_err(on_io)?;
        match rtype {
            rep::ERR_UNSUP => return Ok(None),
            e if is_rep_err(e) => {
                let msg = String::from_utf8_lossy(&data);
                let msg = if msg.is_empty() {
                    String::new()
                } else {
                    format!(": {msg}")
                };
                return Err(err(
                    t,
                    format!(
                        "the server refused the export with {}{msg}",
                        rep_err_name(e)
                    ),
                ));
            }
            rep::INFO
                if data.len() >= 12 && u16::from_be_bytes([data[0], data[1]]) == info::EXPORT =>
            {
                let size = u64::from_be_bytes(data[2..10].try_into().expect("8 bytes"));
                let flags = u16::from_be_bytes([data[10], data[11]]);
                info = Some(ExportInfo {
                    size_bytes: size,
                    flags,
                });
            }
            rep::INFO => {} // other information (name, block sizes) is not needed
            rep::ACK => {
                return info.map(Some).ok_or_else(|| {
                    err(
                        t,
                        "the server acknowledged NBD_OPT_GO without NBD_INFO_EXPORT",
                    )
                });
            }
            other => return Err(err(t, format!("unexpected option reply type {other}"))),
        }
    }
}

/// The old way in: NBD_OPT_EXPORT_NAME, answered by size and flags, or by
/// the server closing the connection when there is no such export.
fn export_name<S: Read + Write>(
    s: &mut S,
    t: &NbdTarget,
    no_zeroes: bool,
) -> io::Result<ExportInfo> {
    send_option(s, opt::EXPORT_NAME, t.export.as_bytes())
        .map_err(|e| err(t, format!("handshake failed: {e}")))?;
    let closed = |e: io::Error| {
        err(
            t,
            format!(
                "the server closed the connection after NBD_OPT_EXPORT_NAME (no such export?): {e}"
            ),
        )
    };
    let size_bytes = read_u64(s).map_err(closed)?;
    let flags = read_u16(s).map_err(closed)?;
    if !no_zeroes {
        let mut zeroes = [0u8; 124];
        s.read_exact(&mut zeroes).map_err(closed)?;
    }
    Ok(ExportInfo { size_bytes, flags })
}
