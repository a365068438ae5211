//! NBD wire constants and the fixed-size messages of the transmission
//! phase, from the protocol specification (NetworkBlockDevice/nbd,
//! doc/proto.md). Written here rather than shared with iolab-target so the
//! engine does not depend on the server at run time.

/// "NBDMAGIC", the first 8 bytes the server sends.
pub const NBD_MAGIC: u64 = 0x4e42_444d_4147_4943;
/// "IHAVEOPT": the newstyle magic, and the prefix of every option request.
pub const IHAVEOPT: u64 = 0x4948_4156_454f_5054;
/// Prefix of every option reply.
pub const REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
pub const REQUEST_MAGIC: u32 = 0x2560_9513;
pub const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;

/// Handshake flags (server) and client flags.
pub const FLAG_FIXED_NEWSTYLE: u16 = 1 << 0;
pub const FLAG_NO_ZEROES: u16 = 1 << 1;

pub const OPT_EXPORT_NAME: u32 = 1;
pub const OPT_GO: u32 = 7;
pub const REP_ACK: u32 = 1;
pub const REP_INFO: u32 = 3;
pub const INFO_EXPORT: u16 = 0;
const REP_ERR: u32 = 1 << 31;
pub const REP_ERR_UNSUP: u32 = REP_ERR | 1;

/// Transmission flags.
pub const TF_READ_ONLY: u16 = 1 << 1;
pub const TF_SEND_FLUSH: u16 = 1 << 2;
pub const TF_SEND_FUA: u16 = 1 << 3;
pub const TF_CAN_MULTI_CONN: u16 = 1 << 8;

pub const CMD_READ: u16 = 0;
pub const CMD_WRITE: u16 = 1;
pub const CMD_DISC: u16 = 2;
pub const CMD_FLUSH: u16 = 3;
pub const CMD_FLAG_FUA: u16 = 1 << 0;

pub const REQUEST_BYTES: usize = 28;
pub const SIMPLE_REPLY_BYTES: usize = 16;

/// Name of an option-reply error, for messages.
pub fn rep_err_name(t: u32) -> &'static str {
    match t & !REP_ERR {
        1 => "NBD_REP_ERR_UNSUP",
        2 => "NBD_REP_ERR_POLICY (the server refuses this client)",
        3 => "NBD_REP_ERR_INVALID",
        4 => "NBD_REP_ERR_PLATFORM",
        5 => "NBD_REP_ERR_TLS_REQD (the server requires TLS, which iolab does not support)",
        6 => "NBD_REP_ERR_UNKNOWN (no such export)",
        7 => "NBD_REP_ERR_SHUTDOWN (the server is shutting down)",
        8 => "NBD_REP_ERR_BLOCK_SIZE_REQD",
        9 => "NBD_REP_ERR_TOO_BIG",
        _ => "an unknown option error",
    }
}

pub fn is_rep_err(t: u32) -> bool {
    t & REP_ERR != 0
}

/// Names of the transmission flags set in `f`, for the engine's notes.
pub fn flag_names(f: u16) -> Vec<&'static str> {
    const NAMES: [&str; 12] = [
        "HAS_FLAGS",
        "READ_ONLY",
        "SEND_FLUSH",
        "SEND_FUA",
        "ROTATIONAL",
        "SEND_TRIM",
        "SEND_WRITE_ZEROES",
        "SEND_DF",
        "CAN_MULTI_CONN",
        "SEND_RESIZE",
        "SEND_CACHE",
        "SEND_FAST_ZERO",
    ];
    (0..NAMES.len())
        .filter(|b| f & (1 << b) != 0)
        .map(|b| NAMES[b])
        .collect()
}

/// Append one request header to `out`.
pub fn put_request(out: &mut Vec<u8>, flags: u16, cmd: u16, cookie: u64, offset: u64, len: u32) {
    out.extend_from_slice(&REQUEST_MAGIC.to_be_bytes());
    out.extend_from_slice(&flags.to_be_bytes());
    out.extend_from_slice(&cmd.to_be_bytes());
    out.extend_from_slice(&cookie.to_be_bytes());
    out.extend_from_slice(&offset.to_be_bytes());
    out.extend_from_slice(&len.to_be_bytes());
}

/// A simple reply header: `(error, cookie)`, or `None` on a bad magic
/// (a structured reply, which iolab never negotiates, or a broken stream).
pub fn parse_simple_reply(b: &[u8; SIMPLE_REPLY_BYTES]) -> Option<(u32, u64)> {
    let magic = u32::from_be_bytes(b[0..4].try_into().ok()?);
    if magic != SIMPLE_REPLY_MAGIC {
        return None;
    }
    let error = u32::from_be_bytes(b[4..8].try_into().ok()?);
    let cookie = u64::from_be_bytes(b[8..16].try_into().ok()?);
    Some((error, cookie))
}
