//! The client's side of the NBD wire: the protocol's numbers (the
//! `iolab-nbd` crate, shared with iolab-target without the engine depending
//! on the server), names for messages, and the fixed-size messages of the
//! transmission phase.

pub use iolab_nbd::*;

/// Name of an option-reply error, for messages.
pub fn rep_err_name(t: u32) -> &'static str {
    match t & !rep::ERR {
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
    t & rep::ERR != 0
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
