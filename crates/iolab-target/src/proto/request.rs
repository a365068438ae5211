//! Transmission requests: the 28-byte header and its validation.
//!
//! [`parse_request`] only checks the magic (a wrong magic means the byte
//! stream has lost its framing, so the session must end). Everything else
//! about a request is judged by [`check_request`] against the export's
//! [`Geometry`], which answers either a typed [`Command`] or the NBD error
//! to reply with ([`Rejection`]), in this order:
//!
//! 1. unknown command (CACHE and BLOCK_STATUS included) → `NBD_EINVAL`
//!    (the spec: "SHOULD return NBD_EINVAL if it receives an unknown
//!    command"; `NBD_ENOTSUP` is reserved for fast-zero requests);
//! 2. a flag not valid for the command or not negotiated → `NBD_EINVAL`;
//! 3. WRITE, TRIM or WRITE_ZEROES on a read-only export → `NBD_EPERM`;
//! 4. FLUSH, TRIM or WRITE_ZEROES not advertised → `NBD_EINVAL`;
//! 5. FLUSH with nonzero offset or length → `NBD_EINVAL`;
//! 6. READ or WRITE longer than the advertised maximum payload → `NBD_EINVAL`;
//! 7. past the end of the export → `NBD_ENOSPC` for WRITE and WRITE_ZEROES,
//!    `NBD_EINVAL` for READ and TRIM (as the spec's error section says);
//! 8. offset or length not a multiple of the minimum block size → `NBD_EINVAL`.
//!
//! How much of a WRITE payload to read is a separate question answered by
//! [`write_payload_action`]: the payload follows the header whatever the
//! verdict, and must be consumed to keep the stream framed.

use super::{be_u16, be_u32, be_u64, cmd, cmd_flag, tflags, Errno, ProtoError, REQUEST_MAGIC};

pub use super::REQUEST_BYTES;

/// The spec: a payload up to 2^25 bytes SHOULD NOT be treated as a denial
/// of service even past the advertised maximum. Up to here an oversized
/// WRITE payload is read and discarded and the request fails with
/// `NBD_EINVAL`; beyond it the session ends.
pub const DISCARD_LIMIT_BYTES: u32 = 1 << 25;

/// A request header as sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestHeader {
    pub flags: u16,
    pub kind: u16,
    pub cookie: u64,
    pub offset: u64,
    pub len_bytes: u32,
}

/// Parse a request header; only a bad magic is an error here.
pub fn parse_request(b: &[u8; REQUEST_BYTES]) -> Result<RequestHeader, ProtoError> {
    let magic = be_u32(b, 0);
    if magic != REQUEST_MAGIC {
        return Err(ProtoError::BadMagic {
            expected: u64::from(REQUEST_MAGIC),
            found: u64::from(magic),
        });
    }
    Ok(RequestHeader {
        flags: be_u16(b, 4),
        kind: be_u16(b, 6),
        cookie: be_u64(b, 8),
        offset: be_u64(b, 16),
        len_bytes: be_u32(b, 24),
    })
}

/// Encode a request header (the client side; used by tests and clients).
pub fn encode_request(h: &RequestHeader) -> [u8; REQUEST_BYTES] {
    let mut b = [0u8; REQUEST_BYTES];
    b[0..4].copy_from_slice(&REQUEST_MAGIC.to_be_bytes());
    b[4..6].copy_from_slice(&h.flags.to_be_bytes());
    b[6..8].copy_from_slice(&h.kind.to_be_bytes());
    b[8..16].copy_from_slice(&h.cookie.to_be_bytes());
    b[16..24].copy_from_slice(&h.offset.to_be_bytes());
    b[24..28].copy_from_slice(&h.len_bytes.to_be_bytes());
    b
}

/// What the server does with the bytes following a WRITE header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadAction {
    /// No payload (not a WRITE, or a zero-length one).
    None,
    /// Read it into a buffer.
    Read,
    /// Read and throw away (the request will be rejected).
    Discard,
    /// Too long to be worth reading: end the session.
    Disconnect,
}

/// Decide how to consume a request's payload given the advertised maximum.
pub fn write_payload_action(h: &RequestHeader, max_payload_bytes: u32) -> PayloadAction {
    if h.kind != cmd::WRITE || h.len_bytes == 0 {
        PayloadAction::None
    } else if h.len_bytes <= max_payload_bytes {
        PayloadAction::Read
    } else if h.len_bytes <= DISCARD_LIMIT_BYTES.max(max_payload_bytes) {
        PayloadAction::Discard
    } else {
        PayloadAction::Disconnect
    }
}

/// An export's shape as negotiated on one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub size_bytes: u64,
    pub min_block_bytes: u32,
    pub max_payload_bytes: u32,
    /// Transmission flags sent to this client.
    pub tflags: u16,
    pub structured_replies: bool,
}

/// A valid request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Read {
        offset: u64,
        len_bytes: u32,
    },
    Write {
        offset: u64,
        len_bytes: u32,
        fua: bool,
    },
    Flush,
    Trim {
        offset: u64,
        len_bytes: u32,
        fua: bool,
    },
    /// `may_trim` is false when the client set `NBD_CMD_FLAG_NO_HOLE`.
    WriteZeroes {
        offset: u64,
        len_bytes: u32,
        fua: bool,
        may_trim: bool,
    },
    Disconnect,
}

/// Why a request is refused, and the error to reply with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rejection {
    pub errno: Errno,
    pub reason: &'static str,
}

fn reject(errno: Errno, reason: &'static str) -> Rejection {
    Rejection { errno, reason }
}

/// Judge a request against the export (order documented at the top).
pub fn check_request(h: &RequestHeader, g: &Geometry) -> Result<Command, Rejection> {
    let known = [
        cmd::READ,
        cmd::WRITE,
        cmd::DISC,
        cmd::FLUSH,
        cmd::TRIM,
        cmd::WRITE_ZEROES,
    ];
    if !known.contains(&h.kind) {
        return Err(reject(Errno::Inval, "unknown or unsupported command"));
    }
    if h.kind == cmd::DISC {
        return Ok(Command::Disconnect);
    }
    check_flags(h, g)?;
    let writes = matches!(h.kind, cmd::WRITE | cmd::TRIM | cmd::WRITE_ZEROES);
    if writes && g.tflags & tflags::READ_ONLY != 0 {
        return Err(reject(Errno::Perm, "the export is read-only"));
    }
    check_advertised(h.kind, g.tflags)?;
    if h.kind == cmd::FLUSH {
        if h.offset != 0 || h.len_bytes != 0 {
            return Err(reject(Errno::Inval, "flush offset and length must be zero"));
        }
        return Ok(Command::Flush);
    }
    if matches!(h.kind, cmd::READ | cmd::WRITE) && h.len_bytes > g.max_payload_bytes {
        return Err(reject(
            Errno::Inval,
            "length exceeds the advertised maximum payload",
        ));
    }
    check_range(h, g)?;
    let fua = h.flags & cmd_flag::FUA != 0;
    let (offset, len_bytes) = (h.offset, h.len_bytes);
    Ok(match h.kind {
        cmd::READ => Command::Read { offset, len_bytes },
        cmd::WRITE => Command::Write {
            offset,
            len_bytes,
            fua,
        },
        cmd::TRIM => Command::Trim {
            offset,
            len_bytes,
            fua,
        },
        _ => Command::WriteZeroes {
            offset,
            len_bytes,
            fua,
            may_trim: h.flags & cmd_flag::NO_HOLE == 0,
        },
    })
}

fn check_flags(h: &RequestHeader, g: &Geometry) -> Result<(), Rejection> {
    let mut allowed = 0u16;
    // The spec: with SEND_FUA negotiated, FUA MUST be accepted on every command.
    if g.tflags & tflags::SEND_FUA != 0 {
        allowed |= cmd_flag::FUA;
    }
    if h.kind == cmd::WRITE_ZEROES {
        allowed |= cmd_flag::NO_HOLE;
    }
    if h.kind == cmd::READ && g.tflags & tflags::SEND_DF != 0 {
        allowed |= cmd_flag::DF;
    }
    if h.flags & !allowed != 0 {
        return Err(reject(
            Errno::Inval,
            "command flags not valid for this command or not negotiated",
        ));
    }
    Ok(())
}

fn check_advertised(kind: u16, tf: u16) -> Result<(), Rejection> {
    let (needed, what) = match kind {
        cmd::FLUSH => (tflags::SEND_FLUSH, "flush is not supported by this export"),
        cmd::TRIM => (tflags::SEND_TRIM, "trim is not supported by this export"),
        cmd::WRITE_ZEROES => (
            tflags::SEND_WRITE_ZEROES,
            "write zeroes is not supported by this export",
        ),
        _ => return Ok(()),
    };
    if tf & needed == 0 {
        return Err(reject(Errno::Inval, what));
    }
    Ok(())
}

fn check_range(h: &RequestHeader, g: &Geometry) -> Result<(), Rejection> {
    let past_end = h
        .offset
        .checked_add(u64::from(h.len_bytes))
        .is_none_or(|end| end > g.size_bytes);
    if past_end {
        return Err(match h.kind {
            cmd::WRITE | cmd::WRITE_ZEROES => {
                reject(Errno::NoSpc, "request extends past the end of the export")
            }
            _ => reject(Errno::Inval, "request extends past the end of the export"),
        });
    }
    let b = u64::from(g.min_block_bytes.max(1));
    if !h.offset.is_multiple_of(b) || !u64::from(h.len_bytes).is_multiple_of(b) {
        return Err(reject(
            Errno::Inval,
            "offset or length not a multiple of the minimum block size",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
