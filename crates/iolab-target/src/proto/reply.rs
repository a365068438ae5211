//! Replies: transmission replies (simple replies and structured reply
//! chunks) and, at the end, the option replies of the handshake.
//!
//! Without structured replies every request gets a 16-byte simple reply
//! (followed by the data of a successful READ). With them, the server
//! answers:
//! - a successful READ with one `NBD_REPLY_TYPE_OFFSET_DATA` chunk flagged
//!   DONE (never fragmented, which is why SEND_DF is advertised);
//! - any failed request with one `NBD_REPLY_TYPE_ERROR` chunk flagged DONE,
//!   carrying the reason as a message for the user (the spec prefers
//!   errors as structured replies);
//! - other successful requests with a simple reply (the spec allows it for
//!   every request but READ, and it is 4 bytes shorter than a NONE chunk).
//!
//! The functions return fixed-size headers so that the data of a READ can
//! follow in the same vectored write without being copied.

use super::{
    chunk, rep, Errno, MAX_STRING_BYTES, OPT_REPLY_MAGIC, SIMPLE_REPLY_MAGIC,
    STRUCTURED_REPLY_MAGIC,
};

pub use super::SIMPLE_REPLY_BYTES;
pub const CHUNK_HEADER_BYTES: usize = 20;
/// Chunk header plus the 8-byte offset of an OFFSET_DATA chunk.
pub const OFFSET_DATA_HEADER_BYTES: usize = CHUNK_HEADER_BYTES + 8;

/// A simple reply; `errno` `None` means success.
pub fn simple_reply(cookie: u64, errno: Option<Errno>) -> [u8; SIMPLE_REPLY_BYTES] {
    let mut b = [0u8; SIMPLE_REPLY_BYTES];
    b[0..4].copy_from_slice(&SIMPLE_REPLY_MAGIC.to_be_bytes());
    b[4..8].copy_from_slice(&errno.map_or(0, Errno::code).to_be_bytes());
    b[8..16].copy_from_slice(&cookie.to_be_bytes());
    b
}

/// A structured chunk header announcing `payload_len` bytes.
pub fn chunk_header(
    flags: u16,
    ty: u16,
    cookie: u64,
    payload_len: u32,
) -> [u8; CHUNK_HEADER_BYTES] {
    let mut b = [0u8; CHUNK_HEADER_BYTES];
    b[0..4].copy_from_slice(&STRUCTURED_REPLY_MAGIC.to_be_bytes());
    b[4..6].copy_from_slice(&flags.to_be_bytes());
    b[6..8].copy_from_slice(&ty.to_be_bytes());
    b[8..16].copy_from_slice(&cookie.to_be_bytes());
    b[16..20].copy_from_slice(&payload_len.to_be_bytes());
    b
}

/// Header of the single, final OFFSET_DATA chunk of a READ; `data_len`
/// bytes of data follow it.
pub fn offset_data_header(
    cookie: u64,
    offset: u64,
    data_len: u32,
) -> [u8; OFFSET_DATA_HEADER_BYTES] {
    let mut b = [0u8; OFFSET_DATA_HEADER_BYTES];
    let payload = data_len
        .checked_add(8)
        .expect("read length is bounded by the maximum payload");
    b[..CHUNK_HEADER_BYTES].copy_from_slice(&chunk_header(
        chunk::FLAG_DONE,
        chunk::TYPE_OFFSET_DATA,
        cookie,
        payload,
    ));
    b[CHUNK_HEADER_BYTES..].copy_from_slice(&offset.to_be_bytes());
    b
}

/// A final ERROR chunk with a message (cut to the spec's string limit).
pub fn error_chunk(cookie: u64, errno: Errno, msg: &str) -> Vec<u8> {
    let msg = truncate_str(msg).as_bytes();
    let payload_len = 6 + msg.len() as u32;
    let mut b = Vec::with_capacity(CHUNK_HEADER_BYTES + payload_len as usize);
    b.extend_from_slice(&chunk_header(
        chunk::FLAG_DONE,
        chunk::TYPE_ERROR,
        cookie,
        payload_len,
    ));
    b.extend_from_slice(&errno.code().to_be_bytes());
    b.extend_from_slice(&(msg.len() as u16).to_be_bytes());
    b.extend_from_slice(msg);
    b
}

/// Append one option reply.
pub fn push_reply(out: &mut Vec<u8>, option: u32, reply_type: u32, data: &[u8]) {
    out.extend_from_slice(&OPT_REPLY_MAGIC.to_be_bytes());
    out.extend_from_slice(&option.to_be_bytes());
    out.extend_from_slice(&reply_type.to_be_bytes());
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(data);
}

/// Append an option error reply carrying a message for the user.
pub fn push_error(out: &mut Vec<u8>, option: u32, reply_type: u32, msg: &str) {
    push_reply(out, option, reply_type, truncate_str(msg).as_bytes());
}

/// Append an `NBD_REP_INFO` whose payload is a string (NAME, DESCRIPTION).
pub fn push_info_string(out: &mut Vec<u8>, option: u32, ty: u16, s: &str) {
    let s = truncate_str(s);
    let mut d = Vec::with_capacity(2 + s.len());
    d.extend_from_slice(&ty.to_be_bytes());
    d.extend_from_slice(s.as_bytes());
    push_reply(out, option, rep::INFO, &d);
}

/// Cut a string to the spec's 4096-byte limit on a character boundary.
pub fn truncate_str(s: &str) -> &str {
    if s.len() <= MAX_STRING_BYTES {
        return s;
    }
    let mut end = MAX_STRING_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_reply_layout() {
        let b = simple_reply(0x0102_0304_0506_0708, Some(Errno::NoSpc));
        assert_eq!(&b[0..4], &[0x67, 0x44, 0x66, 0x98]);
        assert_eq!(&b[4..8], &28u32.to_be_bytes());
        assert_eq!(&b[8..16], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(&simple_reply(9, None)[4..8], &[0, 0, 0, 0]);
    }

    #[test]
    fn offset_data_header_counts_offset_in_length() {
        let b = offset_data_header(7, 4096, 512);
        assert_eq!(&b[0..4], &[0x66, 0x8e, 0x33, 0xef]);
        assert_eq!(u16::from_be_bytes([b[4], b[5]]), chunk::FLAG_DONE);
        assert_eq!(u16::from_be_bytes([b[6], b[7]]), chunk::TYPE_OFFSET_DATA);
        assert_eq!(u64::from_be_bytes(b[8..16].try_into().unwrap()), 7);
        assert_eq!(u32::from_be_bytes(b[16..20].try_into().unwrap()), 520);
        assert_eq!(u64::from_be_bytes(b[20..28].try_into().unwrap()), 4096);
    }

    #[test]
    fn error_chunk_carries_message_and_is_final() {
        let b = error_chunk(3, Errno::Perm, "read-only");
        assert_eq!(u16::from_be_bytes([b[4], b[5]]), chunk::FLAG_DONE);
        assert_eq!(u16::from_be_bytes([b[6], b[7]]), chunk::TYPE_ERROR);
        assert_eq!(u32::from_be_bytes(b[16..20].try_into().unwrap()), 6 + 9);
        assert_eq!(u32::from_be_bytes(b[20..24].try_into().unwrap()), 1);
        assert_eq!(u16::from_be_bytes([b[24], b[25]]), 9);
        assert_eq!(&b[26..], b"read-only");
    }

    #[test]
    fn error_message_is_cut_on_a_char_boundary() {
        let long = "é".repeat(3000); // 6000 bytes
        let b = error_chunk(1, Errno::Io, &long);
        let n = u16::from_be_bytes([b[24], b[25]]) as usize;
        assert!(n <= MAX_STRING_BYTES);
        assert!(std::str::from_utf8(&b[26..26 + n]).is_ok());
    }
}
