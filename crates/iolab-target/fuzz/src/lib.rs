//! Fuzz harnesses for the NBD protocol of iolab-target, shared by the
//! cargo-fuzz targets (`fuzz_targets/*.rs`, nightly) and the stable replay
//! of the corpus (`tests/integration/fuzz_corpus.rs`, which includes this file with
//! `#[path]`, so it must build with std and iolab-target alone).
//!
//! - [`session`]: the whole client byte stream through the pure protocol
//!   functions, framed exactly as the server frames it (client flags,
//!   option headers and data into [`Negotiation`], then request headers,
//!   their WRITE payloads and [`check_request`]), checking the replies'
//!   framing and that every accepted request lies inside the export;
//! - [`request`]: one request header judged against an arbitrary export
//!   geometry, with the same invariants;
//! - [`server`]: the same bytes sent to a real in-process server over a
//!   Unix socket (see `live.rs`): it must answer and hang up, never hang or
//!   panic, and stay available to the next client.
//!
//! A violated invariant panics, which libFuzzer reports as a crash.

use iolab_target::proto::handshake::{
    parse_client_flags, parse_option_header, Catalog, ExportInfo, Negotiation, Outcome, Selected,
};
use iolab_target::proto::reply::{error_chunk, CHUNK_HEADER_BYTES};
use iolab_target::proto::request::{
    check_request, parse_request, write_payload_action, Command, Geometry, PayloadAction,
    RequestHeader, REQUEST_BYTES,
};
use iolab_target::proto::{tflags, OPT_REPLY_MAGIC};

mod live;
pub use live::{server, server_finish};

/// The advertised maximum payload of [`Exports`] (small, so that a fuzzed
/// WRITE payload can be read whole).
pub const MAX_PAYLOAD_BYTES: u32 = 64 * 1024;

/// The exports the pure harness negotiates against: a writable one (the
/// default) and a read-only one with a 512-byte minimum block size.
#[derive(Debug)]
pub struct Exports;

const EXPORTS: [(&str, &str, u64, bool, u32); 2] = [
    ("m", "writable memory", 1 << 20, false, 1),
    ("ro", "read-only", 64 * 1024, true, 512),
];

impl Catalog for Exports {
    fn len(&self) -> usize {
        EXPORTS.len()
    }

    fn get(&self, index: usize) -> Option<ExportInfo<'_>> {
        let &(name, description, size_bytes, ro, min) = EXPORTS.get(index)?;
        let rw = tflags::SEND_FUA | tflags::SEND_TRIM | tflags::SEND_WRITE_ZEROES;
        let base = tflags::HAS_FLAGS | tflags::SEND_FLUSH | tflags::SEND_DF;
        Some(ExportInfo {
            index,
            name,
            description,
            size_bytes,
            tflags: if ro {
                base | tflags::READ_ONLY
            } else {
                base | rw
            },
            min_block_bytes: min,
            preferred_block_bytes: 4096,
            max_payload_bytes: MAX_PAYLOAD_BYTES,
        })
    }

    fn find(&self, name: &str) -> Option<ExportInfo<'_>> {
        let name = if name.is_empty() { EXPORTS[0].0 } else { name };
        (0..EXPORTS.len())
            .find(|&i| EXPORTS[i].0 == name)
            .and_then(|i| self.get(i))
    }
}

/// A cursor over the fuzz input, handing out whole messages.
struct Input<'a>(&'a [u8]);

impl<'a> Input<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
}

/// The client's side of a whole session through the pure protocol code.
pub fn session(data: &[u8]) {
    let mut input = Input(data);
    let Some(flags) = input.take(4) else { return };
    let Ok(flags) = parse_client_flags(flags.try_into().expect("4 bytes")) else {
        return;
    };
    let mut neg = Negotiation::new(flags);
    // Half of the inputs negotiate while the server shuts down.
    let shutting_down = data.len() % 2 == 1;
    let Some(sel) = negotiate(&mut neg, &mut input, shutting_down) else {
        return;
    };
    let e = Exports.get(sel.index).expect("selected export exists");
    assert_eq!(sel.size_bytes, e.size_bytes, "selected size");
    assert!(!shutting_down, "no export is selected during shutdown");
    let geo = Geometry {
        size_bytes: sel.size_bytes,
        min_block_bytes: e.min_block_bytes,
        max_payload_bytes: e.max_payload_bytes,
        tflags: sel.tflags,
        structured_replies: sel.structured_replies,
    };
    transmit(&geo, &mut input);
}

/// Option haggling until an export is selected (`None`: the session ended).
fn negotiate(
    neg: &mut Negotiation,
    input: &mut Input<'_>,
    shutting_down: bool,
) -> Option<Selected> {
    let mut out = Vec::new();
    loop {
        let header = input.take(16)?.try_into().expect("16 bytes");
        let h = parse_option_header(header).ok()?;
        let body = input.take(h.len_bytes as usize)?;
        out.clear();
        match neg.handle(&Exports, shutting_down, h.option, body, &mut out) {
            Outcome::Continue => check_option_replies(&out, h.option),
            Outcome::Abort => {
                check_option_replies(&out, h.option);
                return None;
            }
            Outcome::Transmit(sel) => {
                // EXPORT_NAME answers with bare export data, GO with replies.
                if h.option != iolab_target::proto::opt::EXPORT_NAME {
                    check_option_replies(&out, h.option);
                }
                return Some(sel);
            }
            Outcome::Disconnect(_) => return None,
        }
    }
}

/// Every reply to an option carries the reply magic and that option's
/// code, and their lengths frame the bytes exactly.
fn check_option_replies(mut out: &[u8], option: u32) {
    assert!(!out.is_empty(), "option {option} got no reply");
    while !out.is_empty() {
        assert!(out.len() >= 20, "truncated option reply header");
        let magic = u64::from_be_bytes(out[0..8].try_into().expect("8 bytes"));
        assert_eq!(magic, OPT_REPLY_MAGIC, "option reply magic");
        let opt = u32::from_be_bytes(out[8..12].try_into().expect("4 bytes"));
        assert_eq!(opt, option, "reply names another option");
        let len = u32::from_be_bytes(out[16..20].try_into().expect("4 bytes")) as usize;
        assert!(out.len() >= 20 + len, "option reply runs past its bytes");
        out = &out[20 + len..];
    }
}

/// Requests (and their WRITE payloads) until the input runs out.
fn transmit(geo: &Geometry, input: &mut Input<'_>) {
    while let Some(b) = input.take(REQUEST_BYTES) {
        let Ok(h) = parse_request(b.try_into().expect("28 bytes")) else {
            return;
        };
        match write_payload_action(&h, geo.max_payload_bytes) {
            PayloadAction::None => {}
            PayloadAction::Read | PayloadAction::Discard => {
                if input.take(h.len_bytes as usize).is_none() {
                    return;
                }
            }
            PayloadAction::Disconnect => return,
        }
        if judge(&h, geo) == Some(Command::Disconnect) {
            return;
        }
    }
}

/// One request header against an export geometry, both from the input:
/// flags, size, minimum block and maximum payload vary freely.
pub fn request(data: &[u8]) {
    let mut input = Input(data);
    let Some(g) = input.take(19) else { return };
    let Some(b) = input.take(REQUEST_BYTES) else {
        return;
    };
    let geo = Geometry {
        size_bytes: u64::from_be_bytes(g[0..8].try_into().expect("8 bytes")),
        min_block_bytes: u32::from_be_bytes(g[8..12].try_into().expect("4 bytes")),
        max_payload_bytes: u32::from_be_bytes(g[12..16].try_into().expect("4 bytes")),
        tflags: u16::from_be_bytes([g[16], g[17]]),
        structured_replies: g[18] & 1 != 0,
    };
    let Ok(h) = parse_request(b.try_into().expect("28 bytes")) else {
        return;
    };
    let action = write_payload_action(&h, geo.max_payload_bytes);
    if action == PayloadAction::Read {
        assert!(
            h.len_bytes <= geo.max_payload_bytes,
            "payload over the maximum read"
        );
    }
    judge(&h, &geo);
}

/// Judge a request and check the verdict: an accepted data command lies
/// inside the export, respects the block size and payload limit and never
/// writes a read-only export; a refusal encodes as a valid error chunk.
fn judge(h: &RequestHeader, geo: &Geometry) -> Option<Command> {
    let c = match check_request(h, geo) {
        Ok(c) => c,
        Err(r) => {
            let chunk = error_chunk(h.cookie, r.errno, r.reason);
            let payload = u32::from_be_bytes(chunk[16..20].try_into().expect("4 bytes"));
            assert_eq!(chunk.len(), CHUNK_HEADER_BYTES + payload as usize);
            return None;
        }
    };
    let ro = geo.tflags & tflags::READ_ONLY != 0;
    let (offset, len, write) = match c {
        Command::Read { offset, len_bytes } => (offset, len_bytes, false),
        Command::Write {
            offset, len_bytes, ..
        } => {
            assert!(len_bytes <= geo.max_payload_bytes, "write over the maximum");
            (offset, len_bytes, true)
        }
        Command::Trim {
            offset, len_bytes, ..
        }
        | Command::WriteZeroes {
            offset, len_bytes, ..
        } => (offset, len_bytes, true),
        Command::Flush | Command::Disconnect => return Some(c),
    };
    assert!(
        !(ro && write),
        "write command accepted on a read-only export"
    );
    let end = offset.checked_add(u64::from(len)).expect("range overflows");
    assert!(end <= geo.size_bytes, "request past the end accepted");
    let min = u64::from(geo.min_block_bytes.max(1));
    assert!(
        offset.is_multiple_of(min) && u64::from(len).is_multiple_of(min),
        "unaligned request accepted"
    );
    if let Command::Read { .. } = c {
        assert!(len <= geo.max_payload_bytes, "read over the maximum");
    }
    Some(c)
}
