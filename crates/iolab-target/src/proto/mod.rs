//! The NBD wire protocol as pure functions over byte buffers.
//!
//! Everything here is free of I/O and of server state, so that the server,
//! the tests' minimal client and a cargo-fuzz target can all call it:
//!
//! - this file: the protocol's numbers (magics, flags, option, reply,
//!   info and command codes, error values) from NetworkBlockDevice/nbd
//!   doc/proto.md, and [`ProtoError`] for violations that end a session;
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

/// `NBDMAGIC`, first word of the server greeting.
pub const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
/// `IHAVEOPT`, second word of the greeting and first word of every option.
pub const IHAVEOPT: u64 = 0x4948_4156_454f_5054;
/// Magic of every option reply.
pub const OPT_REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
/// Magic of every transmission request.
pub const REQUEST_MAGIC: u32 = 0x2560_9513;
/// Magic of a simple reply.
pub const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;
/// Magic of a structured reply chunk.
pub const STRUCTURED_REPLY_MAGIC: u32 = 0x668e_33ef;

/// Handshake flags (server → client, 16 bits).
pub const FLAG_FIXED_NEWSTYLE: u16 = 1 << 0;
pub const FLAG_NO_ZEROES: u16 = 1 << 1;

/// Client flags (client → server, 32 bits).
pub const FLAG_C_FIXED_NEWSTYLE: u32 = 1 << 0;
pub const FLAG_C_NO_ZEROES: u32 = 1 << 1;

/// Transmission flags (16 bits, per export).
pub mod tflags {
    pub const HAS_FLAGS: u16 = 1 << 0;
    pub const READ_ONLY: u16 = 1 << 1;
    pub const SEND_FLUSH: u16 = 1 << 2;
    pub const SEND_FUA: u16 = 1 << 3;
    pub const ROTATIONAL: u16 = 1 << 4;
    pub const SEND_TRIM: u16 = 1 << 5;
    pub const SEND_WRITE_ZEROES: u16 = 1 << 6;
    pub const SEND_DF: u16 = 1 << 7;
    pub const CAN_MULTI_CONN: u16 = 1 << 8;
    pub const SEND_CACHE: u16 = 1 << 10;
    pub const SEND_FAST_ZERO: u16 = 1 << 11;
}

/// Option codes.
pub mod opt {
    pub const EXPORT_NAME: u32 = 1;
    pub const ABORT: u32 = 2;
    pub const LIST: u32 = 3;
    pub const STARTTLS: u32 = 5;
    pub const INFO: u32 = 6;
    pub const GO: u32 = 7;
    pub const STRUCTURED_REPLY: u32 = 8;
    pub const LIST_META_CONTEXT: u32 = 9;
    pub const SET_META_CONTEXT: u32 = 10;
    pub const EXTENDED_HEADERS: u32 = 11;
}

/// Option reply types; errors have bit 31 set.
pub mod rep {
    pub const ACK: u32 = 1;
    pub const SERVER: u32 = 2;
    pub const INFO: u32 = 3;
    const ERR: u32 = 1 << 31;
    pub const ERR_UNSUP: u32 = ERR + 1;
    pub const ERR_POLICY: u32 = ERR + 2;
    pub const ERR_INVALID: u32 = ERR + 3;
    pub const ERR_PLATFORM: u32 = ERR + 4;
    pub const ERR_TLS_REQD: u32 = ERR + 5;
    pub const ERR_UNKNOWN: u32 = ERR + 6;
    pub const ERR_SHUTDOWN: u32 = ERR + 7;
    pub const ERR_BLOCK_SIZE_REQD: u32 = ERR + 8;
    pub const ERR_TOO_BIG: u32 = ERR + 9;
}

/// Information types of `NBD_REP_INFO`.
pub mod info {
    pub const EXPORT: u16 = 0;
    pub const NAME: u16 = 1;
    pub const DESCRIPTION: u16 = 2;
    pub const BLOCK_SIZE: u16 = 3;
}

/// Transmission request types.
pub mod cmd {
    pub const READ: u16 = 0;
    pub const WRITE: u16 = 1;
    pub const DISC: u16 = 2;
    pub const FLUSH: u16 = 3;
    pub const TRIM: u16 = 4;
    pub const CACHE: u16 = 5;
    pub const WRITE_ZEROES: u16 = 6;
    pub const BLOCK_STATUS: u16 = 7;
}

/// Command flags.
pub mod cmd_flag {
    pub const FUA: u16 = 1 << 0;
    pub const NO_HOLE: u16 = 1 << 1;
    pub const DF: u16 = 1 << 2;
    pub const REQ_ONE: u16 = 1 << 3;
    pub const FAST_ZERO: u16 = 1 << 4;
}

/// Structured reply flags and chunk types.
pub mod chunk {
    pub const FLAG_DONE: u16 = 1 << 0;
    pub const TYPE_NONE: u16 = 0;
    pub const TYPE_OFFSET_DATA: u16 = 1;
    pub const TYPE_OFFSET_HOLE: u16 = 2;
    pub const TYPE_ERROR: u16 = (1 << 15) + 1;
    pub const TYPE_ERROR_OFFSET: u16 = (1 << 15) + 2;
}

/// Longest string (export name, description, message) the spec allows.
pub const MAX_STRING_BYTES: usize = 4096;

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
