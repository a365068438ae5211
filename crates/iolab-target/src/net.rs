//! Where the server listens: a Unix socket or TCP, loopback unless told
//! otherwise.
//!
//! [`ListenAddr`] parses `unix:PATH` (or any absolute path) and
//! `HOST:PORT` / `tcp:HOST:PORT` (`[::1]:10809` for IPv6; port 0 picks a
//! free port). A TCP address that is not loopback is refused unless the
//! caller allows remote clients explicitly: a lab target usually holds
//! scratch data with no authentication in front of it. [`Stream`] unifies
//! the two socket kinds for the connection code.

use std::fmt;
use std::io::{self, IoSlice, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

/// A listening address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListenAddr {
    Unix(PathBuf),
    Tcp(SocketAddr),
}

impl FromStr for ListenAddr {
    type Err = String;

    fn from_str(s: &str) -> Result<ListenAddr, String> {
        if let Some(p) = s.strip_prefix("unix:") {
            if p.is_empty() {
                return Err("unix: needs a socket path, e.g. unix:/tmp/iolab.sock".into());
            }
            return Ok(ListenAddr::Unix(PathBuf::from(p)));
        }
        if s.starts_with('/') {
            return Ok(ListenAddr::Unix(PathBuf::from(s)));
        }
        let hp = s.strip_prefix("tcp:").unwrap_or(s);
        let addr = hp
            .to_socket_addrs()
            .map_err(|e| format!("'{s}' is neither unix:PATH nor HOST:PORT: {e}"))?
            .next()
            .ok_or_else(|| format!("'{s}' resolves to no address"))?;
        Ok(ListenAddr::Tcp(addr))
    }
}

impl fmt::Display for ListenAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListenAddr::Unix(p) => write!(f, "unix:{}", p.display()),
            ListenAddr::Tcp(a) => write!(f, "{a}"),
        }
    }
}

impl ListenAddr {
    /// The NBD URI a client (qemu, nbdinfo, fio) would use for `export`.
    pub fn uri(&self, export: &str) -> String {
        match self {
            ListenAddr::Unix(p) => format!("nbd+unix:///{export}?socket={}", p.display()),
            ListenAddr::Tcp(a) => format!("nbd://{a}/{export}"),
        }
    }
}

/// A bound listener.
#[derive(Debug)]
pub enum Listener {
    Unix(UnixListener, PathBuf),
    Tcp(TcpListener),
}

impl Listener {
    /// Bind `addr`; non-loopback TCP needs `allow_remote`.
    pub fn bind(addr: &ListenAddr, allow_remote: bool) -> Result<Listener, String> {
        match addr {
            ListenAddr::Tcp(a) => {
                if !a.ip().is_loopback() && !allow_remote {
                    return Err(format!(
                        "refusing to listen on {a}: not a loopback address, and NBD has no \
                         authentication; to serve other hosts pass --listen-any \
                         (allow_remote = true under [server] in a config file)"
                    ));
                }
                let l = TcpListener::bind(a).map_err(|e| format!("listen on {a}: {e}"))?;
                Ok(Listener::Tcp(l))
            }
            ListenAddr::Unix(p) => {
                remove_stale_socket(p)?;
                let l =
                    UnixListener::bind(p).map_err(|e| format!("listen on {}: {e}", p.display()))?;
                Ok(Listener::Unix(l, p.clone()))
            }
        }
    }

    /// The address actually bound (the real port when 0 was asked).
    pub fn local_addr(&self) -> io::Result<ListenAddr> {
        match self {
            Listener::Unix(_, p) => Ok(ListenAddr::Unix(p.clone())),
            Listener::Tcp(l) => Ok(ListenAddr::Tcp(l.local_addr()?)),
        }
    }

    pub fn accept(&self) -> io::Result<Stream> {
        match self {
            Listener::Unix(l, _) => Ok(Stream::Unix(l.accept()?.0)),
            Listener::Tcp(l) => {
                let s = l.accept()?.0;
                // The spec: both ends SHOULD disable Nagle.
                s.set_nodelay(true)?;
                Ok(Stream::Tcp(s))
            }
        }
    }

    pub fn fd(&self) -> BorrowedFd<'_> {
        match self {
            Listener::Unix(l, _) => l.as_fd(),
            Listener::Tcp(l) => l.as_fd(),
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Listener::Unix(_, p) = self {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Remove a socket file nobody listens on; refuse to touch anything else.
fn remove_stale_socket(p: &PathBuf) -> Result<(), String> {
    let Ok(meta) = std::fs::symlink_metadata(p) else {
        return Ok(());
    };
    if !meta.file_type().is_socket() {
        return Err(format!(
            "{}: exists and is not a socket; choose another path",
            p.display()
        ));
    }
    if UnixStream::connect(p).is_ok() {
        return Err(format!(
            "{}: another server is listening there",
            p.display()
        ));
    }
    std::fs::remove_file(p).map_err(|e| format!("{}: remove stale socket: {e}", p.display()))
}

/// A connected socket of either kind.
#[derive(Debug)]
pub enum Stream {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Stream {
    pub fn try_clone(&self) -> io::Result<Stream> {
        Ok(match self {
            Stream::Unix(s) => Stream::Unix(s.try_clone()?),
            Stream::Tcp(s) => Stream::Tcp(s.try_clone()?),
        })
    }

    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        match self {
            Stream::Unix(s) => s.shutdown(how),
            Stream::Tcp(s) => s.shutdown(how),
        }
    }

    pub fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Unix(s) => s.set_read_timeout(t),
            Stream::Tcp(s) => s.set_read_timeout(t),
        }
    }
}

impl std::os::fd::AsRawFd for Stream {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        match self {
            Stream::Unix(s) => s.as_raw_fd(),
            Stream::Tcp(s) => s.as_raw_fd(),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Unix(s) => s.read(buf),
            Stream::Tcp(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Unix(s) => s.write(buf),
            Stream::Tcp(s) => s.write(buf),
        }
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Stream::Unix(s) => s.write_vectored(bufs),
            Stream::Tcp(s) => s.write_vectored(bufs),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Write every byte of `bufs` (std's `write_all_vectored` is unstable).
pub fn write_all_vectored(w: &mut impl Write, mut bufs: &mut [IoSlice<'_>]) -> io::Result<()> {
    IoSlice::advance_slices(&mut bufs, 0);
    while !bufs.is_empty() {
        match w.write_vectored(bufs) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut bufs, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_unix_and_tcp_addresses() {
        assert_eq!(
            "unix:/tmp/a.sock".parse(),
            Ok(ListenAddr::Unix("/tmp/a.sock".into()))
        );
        assert_eq!(
            "/tmp/b.sock".parse(),
            Ok(ListenAddr::Unix("/tmp/b.sock".into()))
        );
        assert_eq!(
            "127.0.0.1:10809".parse(),
            Ok(ListenAddr::Tcp("127.0.0.1:10809".parse().unwrap()))
        );
        assert_eq!(
            "tcp:[::1]:0".parse(),
            Ok(ListenAddr::Tcp("[::1]:0".parse().unwrap()))
        );
        assert!("unix:".parse::<ListenAddr>().is_err());
        assert!("nonsense".parse::<ListenAddr>().is_err());
    }

    #[test]
    fn non_loopback_needs_explicit_permission() {
        let any: ListenAddr = "0.0.0.0:0".parse().unwrap();
        assert!(Listener::bind(&any, false)
            .unwrap_err()
            .contains("not a loopback"));
        let lo: ListenAddr = "127.0.0.1:0".parse().unwrap();
        let l = Listener::bind(&lo, false).unwrap();
        assert!(matches!(l.local_addr().unwrap(), ListenAddr::Tcp(a) if a.port() != 0));
    }

    #[test]
    fn unix_socket_is_removed_on_drop_and_stale_ones_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.sock");
        let addr = ListenAddr::Unix(p.clone());
        let l = Listener::bind(&addr, false).unwrap();
        assert!(Listener::bind(&addr, false)
            .unwrap_err()
            .contains("another server"));
        drop(l);
        assert!(!p.exists());
        // A socket file left by a killed server is replaced.
        drop(UnixListener::bind(&p).unwrap());
        drop(Listener::bind(&addr, false).unwrap());
        std::fs::write(dir.path().join("f"), b"x").unwrap();
        let f = ListenAddr::Unix(dir.path().join("f"));
        assert!(Listener::bind(&f, false)
            .unwrap_err()
            .contains("not a socket"));
        assert_eq!(
            addr.uri("d0"),
            format!("nbd+unix:///d0?socket={}", p.display())
        );
    }
}
