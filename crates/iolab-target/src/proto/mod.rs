//! The NBD wire protocol as pure functions over byte buffers.
//!
//! Everything here is free of I/O and of server state, so that the server,
//! the tests' minimal client and a cargo-fuzz target can all call it:
//!
//! - this file: the protocol's numbers (re-exported from the `iolab-nbd`
//!   crate, which the engine's client shares), the error values
//!   ([`Errno`]), and [`ProtoError`] for violations that end a session;
//! - [`handshake`]: the greeting, client flags and option headers, and
//!   [`handshake::Negotiation`], the fixed-newstyle option haggling as a
//!   state machine (`option in → reply bytes + outcome`);
//! - [`request`]: the 28-byte request header and its validation against an
//!   export's geometry ([`request::check_request`] → a typed command or the
//!   NBD error to answer);
//! - [`reply`]: simple replies and structured reply chunks.
//!
//! Only fixed newstyle is spoken (oldstyle and non-fixed newstyle were
//! dropped by the reference server too), without TLS, extended headers or
//! block status; every option or command not listed in docs/target.md is
//! answered with the spec's "unsupported" reply, never ignored.

pub mod handshake;
pub mod reply;
pub mod request;

use std::fmt;

pub use iolab_nbd::*;

/// The error values a reply may carry (the spec restricts them to these).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Errno {
    Perm = 1,
    Io = 5,
    NoMem = 12,
    Inval = 22,
    NoSpc = 28,
    Overflow = 75,
    NotSup = 95,
    Shutdown = 108,
}

impl Errno {
    pub fn code(self) -> u32 {
        self as u32
    }

    /// The spec's name, e.g. `NBD_EIO`.
    pub fn name(self) -> &'static str {
        match self {
            Errno::Perm => "NBD_EPERM",
            Errno::Io => "NBD_EIO",
            Errno::NoMem => "NBD_ENOMEM",
            Errno::Inval => "NBD_EINVAL",
            Errno::NoSpc => "NBD_ENOSPC",
            Errno::Overflow => "NBD_EOVERFLOW",
            Errno::NotSup => "NBD_ENOTSUP",
            Errno::Shutdown => "NBD_ESHUTDOWN",
        }
    }

    /// Map an OS error to the closest NBD error, as the spec asks
    /// (EDQUOT and EFBIG become ENOSPC; EROFS becomes EPERM).
    pub fn from_io(e: &std::io::Error) -> Errno {
        match e.raw_os_error() {
            Some(libc::EPERM | libc::EACCES | libc::EROFS) => Errno::Perm,
            Some(libc::ENOSPC | libc::EDQUOT | libc::EFBIG) => Errno::NoSpc,
            Some(libc::EINVAL) => Errno::Inval,
            Some(libc::ENOMEM) => Errno::NoMem,
            Some(libc::EOPNOTSUPP) => Errno::NotSup,
            _ => Errno::Io,
        }
    }
}

impl fmt::Display for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A violation by the peer that the protocol cannot answer with an error
/// reply: the session must end with a hard disconnect.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProtoError {
    #[error("bad magic {found:#x} (expected {expected:#x})")]
    BadMagic { expected: u64, found: u64 },
    #[error("client flags {0:#x} include bits this server did not offer")]
    UnknownClientFlags(u32),
    #[error(
        "option {option} carries {len_bytes} bytes of data, more than the {limit_bytes} allowed"
    )]
    OptionTooLong {
        option: u32,
        len_bytes: u32,
        limit_bytes: u32,
    },
    #[error("export '{0}' requested with NBD_OPT_EXPORT_NAME does not exist")]
    UnknownExportName(String),
    #[error("write payload of {len_bytes} bytes exceeds the {limit_bytes}-byte limit")]
    PayloadTooLong { len_bytes: u32, limit_bytes: u32 },
}

/// Big-endian readers over a slice known to be long enough.
pub(crate) fn be_u16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

pub(crate) fn be_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

pub(crate) fn be_u64(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}
