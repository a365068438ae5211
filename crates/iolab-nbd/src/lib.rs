//! The NBD protocol's numbers — magics, handshake and transmission flags,
//! option, reply, info, command and chunk codes, header sizes — from the
//! specification (NetworkBlockDevice/nbd, doc/proto.md), in one place for
//! both ends iolab speaks: the engine's `nbd` client backend and
//! `iolab-target`'s server. Numbers only: each side keeps its own parsing
//! and state, so the engine does not depend on the server.

#![no_std]

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
    /// Bit 31: the reply is an error.
    pub const ERR: u32 = 1 << 31;
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

/// A transmission request header: magic, flags, type, cookie, offset, length.
pub const REQUEST_BYTES: usize = 28;
/// A simple reply header: magic, error, cookie.
pub const SIMPLE_REPLY_BYTES: usize = 16;
