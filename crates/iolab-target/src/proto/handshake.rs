//! Fixed newstyle negotiation: greeting, client flags, option headers and
//! option haggling as a pure state machine.
//!
//! The server side of a session calls [`greeting`], reads 4 bytes for
//! [`parse_client_flags`], then repeatedly reads a 16-byte option header
//! ([`parse_option_header`]) and its data, and hands both to
//! [`Negotiation::handle`], which appends the reply bytes to a buffer and
//! says what happens next ([`Outcome`]). Exports are looked up through the
//! [`Catalog`] trait so that this module knows nothing of block devices.
//!
//! Options answered: EXPORT_NAME, ABORT, LIST, INFO, GO (with the EXPORT,
//! NAME, DESCRIPTION and BLOCK_SIZE information types) and
//! STRUCTURED_REPLY; every other option (STARTTLS, meta contexts, extended
//! headers, unknown codes) gets `NBD_REP_ERR_UNSUP` with a message.

use super::reply::{push_error, push_info_string, push_reply};
use super::{
    be_u16, be_u32, be_u64, info, opt, rep, tflags, ProtoError, FLAG_C_FIXED_NEWSTYLE,
    FLAG_C_NO_ZEROES, FLAG_FIXED_NEWSTYLE, FLAG_NO_ZEROES, IHAVEOPT, MAX_STRING_BYTES, NBDMAGIC,
};

/// Option data longer than this ends the session: no option the server
/// understands needs more than a 4096-byte name plus a few info requests,
/// and reading an unbounded length would let one client pin memory.
pub const MAX_OPTION_DATA_BYTES: u32 = 64 * 1024;

/// One export as negotiation sees it.
#[derive(Debug, Clone, Copy)]
pub struct ExportInfo<'a> {
    /// Index in the server's export list.
    pub index: usize,
    /// Canonical name.
    pub name: &'a str,
    pub description: &'a str,
    pub size_bytes: u64,
    /// Transmission flags before negotiation-dependent bits (SEND_DF).
    pub tflags: u16,
    pub min_block_bytes: u32,
    pub preferred_block_bytes: u32,
    pub max_payload_bytes: u32,
}

/// The exports a server offers.
pub trait Catalog {
    /// Number of exports, for NBD_OPT_LIST.
    fn len(&self) -> usize;
    /// Export `index` (0-based), `None` past the end.
    fn get(&self, index: usize) -> Option<ExportInfo<'_>>;
    /// The export a client names; the empty name selects the default export.
    fn find(&self, name: &str) -> Option<ExportInfo<'_>>;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The 18-byte server greeting.
pub fn greeting() -> [u8; 18] {
    let mut g = [0u8; 18];
    g[0..8].copy_from_slice(&NBDMAGIC.to_be_bytes());
    g[8..16].copy_from_slice(&IHAVEOPT.to_be_bytes());
    g[16..18].copy_from_slice(&(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES).to_be_bytes());
    g
}

/// Client flags as negotiated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientFlags {
    pub fixed_newstyle: bool,
    pub no_zeroes: bool,
}

/// The spec: the server MUST drop the connection on a flag it did not offer.
pub fn parse_client_flags(b: [u8; 4]) -> Result<ClientFlags, ProtoError> {
    let v = u32::from_be_bytes(b);
    if v & !(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES) != 0 {
        return Err(ProtoError::UnknownClientFlags(v));
    }
    Ok(ClientFlags {
        fixed_newstyle: v & FLAG_C_FIXED_NEWSTYLE != 0,
        no_zeroes: v & FLAG_C_NO_ZEROES != 0,
    })
}

/// An option header: `IHAVEOPT`, option code, data length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionHeader {
    pub option: u32,
    pub len_bytes: u32,
}

/// Parse a 16-byte option header; a bad magic or an over-long option ends the session.
pub fn parse_option_header(b: &[u8; 16]) -> Result<OptionHeader, ProtoError> {
    let magic = be_u64(b, 0);
    if magic != IHAVEOPT {
        return Err(ProtoError::BadMagic {
            expected: IHAVEOPT,
            found: magic,
        });
    }
    let h = OptionHeader {
        option: be_u32(b, 8),
        len_bytes: be_u32(b, 12),
    };
    if h.len_bytes > MAX_OPTION_DATA_BYTES {
        return Err(ProtoError::OptionTooLong {
            option: h.option,
            len_bytes: h.len_bytes,
            limit_bytes: MAX_OPTION_DATA_BYTES,
        });
    }
    Ok(h)
}

/// What follows an option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Replies were appended; read the next option.
    Continue,
    /// NBD_OPT_ABORT was acknowledged; close the connection.
    Abort,
    /// Enter transmission on this export (the reply bytes end the handshake).
    Transmit(Selected),
    /// Hard disconnect (nothing useful can be replied).
    Disconnect(ProtoError),
}

/// The export chosen for transmission and the negotiated features.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selected {
    pub index: usize,
    pub size_bytes: u64,
    /// Transmission flags as sent to the client.
    pub tflags: u16,
    pub structured_replies: bool,
}

/// Option haggling state of one connection.
#[derive(Debug, Clone, Default)]
pub struct Negotiation {
    client: ClientFlags,
    structured_replies: bool,
}

impl Negotiation {
    pub fn new(client: ClientFlags) -> Negotiation {
        Negotiation {
            client,
            structured_replies: false,
        }
    }

    /// Answer one option, appending reply bytes to `out`. When
    /// `shutting_down`, every option but ABORT is refused with
    /// `NBD_REP_ERR_SHUTDOWN` as the spec asks.
    pub fn handle(
        &mut self,
        cat: &dyn Catalog,
        shutting_down: bool,
        option: u32,
        data: &[u8],
        out: &mut Vec<u8>,
    ) -> Outcome {
        if shutting_down && option != opt::ABORT {
            if option == opt::EXPORT_NAME {
                return Outcome::Disconnect(ProtoError::UnknownExportName(lossy(data)));
            }
            push_error(out, option, rep::ERR_SHUTDOWN, "server is shutting down");
            return Outcome::Continue;
        }
        match option {
            opt::EXPORT_NAME => self.export_name(cat, data, out),
            opt::ABORT => {
                // The spec: the server SHOULD ignore any data sent with ABORT.
                push_reply(out, option, rep::ACK, &[]);
                Outcome::Abort
            }
            opt::LIST => list(cat, data, out),
            opt::INFO | opt::GO => self.info_or_go(cat, option, data, out),
            opt::STRUCTURED_REPLY => self.structured_reply(data, out),
            _ => {
                push_error(out, option, rep::ERR_UNSUP, &unsupported_message(option));
                Outcome::Continue
            }
        }
    }

    fn tflags_for(&self, e: &ExportInfo<'_>) -> u16 {
        // We always answer a read with one data chunk, so DF holds whenever
        // structured replies are on (the spec forbids it otherwise).
        if self.structured_replies {
            e.tflags | tflags::SEND_DF
        } else {
            e.tflags & !tflags::SEND_DF
        }
    }

    fn selected(&self, e: &ExportInfo<'_>) -> Selected {
        Selected {
            index: e.index,
            size_bytes: e.size_bytes,
            tflags: self.tflags_for(e),
            structured_replies: self.structured_replies,
        }
    }

    fn export_name(&mut self, cat: &dyn Catalog, data: &[u8], out: &mut Vec<u8>) -> Outcome {
        // This option cannot be answered with an error: an unknown name
        // (or one that is not a valid string) ends the session.
        let found = std::str::from_utf8(data).ok().and_then(|n| cat.find(n));
        let Some(e) = found else {
            return Outcome::Disconnect(ProtoError::UnknownExportName(lossy(data)));
        };
        let sel = self.selected(&e);
        out.extend_from_slice(&e.size_bytes.to_be_bytes());
        out.extend_from_slice(&sel.tflags.to_be_bytes());
        if !self.client.no_zeroes {
            out.extend_from_slice(&[0u8; 124]);
        }
        Outcome::Transmit(sel)
    }

    fn info_or_go(
        &mut self,
        cat: &dyn Catalog,
        option: u32,
        data: &[u8],
        out: &mut Vec<u8>,
    ) -> Outcome {
        let req = match parse_info_request(data) {
            Ok(r) => r,
            Err(why) => {
                push_error(out, option, rep::ERR_INVALID, why);
                return Outcome::Continue;
            }
        };
        let Some(e) = cat.find(req.name) else {
            let msg = format!(
                "no export named '{}' (NBD_OPT_LIST shows the exports)",
                req.name
            );
            push_error(out, option, rep::ERR_UNKNOWN, &msg);
            return Outcome::Continue;
        };
        let sel = self.selected(&e);
        let mut export = Vec::with_capacity(12);
        export.extend_from_slice(&info::EXPORT.to_be_bytes());
        export.extend_from_slice(&e.size_bytes.to_be_bytes());
        export.extend_from_slice(&sel.tflags.to_be_bytes());
        push_reply(out, option, rep::INFO, &export);
        if req.wants(info::NAME) {
            push_info_string(out, option, info::NAME, e.name);
        }
        if req.wants(info::DESCRIPTION) && !e.description.is_empty() {
            push_info_string(out, option, info::DESCRIPTION, e.description);
        }
        // Sent whether asked or not: a client that did not ask may ignore
        // it, and one that did must obey it.
        let mut bs = Vec::with_capacity(14);
        bs.extend_from_slice(&info::BLOCK_SIZE.to_be_bytes());
        for v in [
            e.min_block_bytes,
            e.preferred_block_bytes,
            e.max_payload_bytes,
        ] {
            bs.extend_from_slice(&v.to_be_bytes());
        }
        push_reply(out, option, rep::INFO, &bs);
        push_reply(out, option, rep::ACK, &[]);
        if option == opt::GO {
            Outcome::Transmit(sel)
        } else {
            Outcome::Continue
        }
    }

    fn structured_reply(&mut self, data: &[u8], out: &mut Vec<u8>) -> Outcome {
        let o = opt::STRUCTURED_REPLY;
        if !data.is_empty() {
            push_error(
                out,
                o,
                rep::ERR_INVALID,
                "NBD_OPT_STRUCTURED_REPLY takes no data",
            );
        } else if self.structured_replies {
            push_error(
                out,
                o,
                rep::ERR_INVALID,
                "structured replies are already negotiated",
            );
        } else {
            self.structured_replies = true;
            push_reply(out, o, rep::ACK, &[]);
        }
        Outcome::Continue
    }
}

fn list(cat: &dyn Catalog, data: &[u8], out: &mut Vec<u8>) -> Outcome {
    if !data.is_empty() {
        push_error(
            out,
            opt::LIST,
            rep::ERR_INVALID,
            "NBD_OPT_LIST takes no data",
        );
        return Outcome::Continue;
    }
    for e in (0..cat.len()).filter_map(|i| cat.get(i)) {
        // Name, then (the spec allows it) the description for humans.
        let mut d = Vec::with_capacity(4 + e.name.len() + e.description.len());
        d.extend_from_slice(&(e.name.len() as u32).to_be_bytes());
        d.extend_from_slice(e.name.as_bytes());
        d.extend_from_slice(e.description.as_bytes());
        push_reply(out, opt::LIST, rep::SERVER, &d);
    }
    push_reply(out, opt::LIST, rep::ACK, &[]);
    Outcome::Continue
}

/// The data of NBD_OPT_INFO / NBD_OPT_GO.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InfoRequest<'a> {
    pub name: &'a str,
    pub infos: Vec<u16>,
}

impl InfoRequest<'_> {
    fn wants(&self, ty: u16) -> bool {
        self.infos.contains(&ty)
    }
}

/// Parse INFO/GO data: u32 name length, name, u16 count, count × u16.
pub fn parse_info_request(data: &[u8]) -> Result<InfoRequest<'_>, &'static str> {
    if data.len() < 6 {
        return Err("option data shorter than the 6 bytes of name length and request count");
    }
    let name_len = be_u32(data, 0) as usize;
    if name_len > data.len() - 6 {
        return Err("export name length runs past the option data");
    }
    if name_len > MAX_STRING_BYTES {
        return Err("export name longer than 4096 bytes");
    }
    let name =
        std::str::from_utf8(&data[4..4 + name_len]).map_err(|_| "export name is not UTF-8")?;
    let n = be_u16(data, 4 + name_len) as usize;
    let rest = &data[6 + name_len..];
    if rest.len() != 2 * n {
        return Err("information request count does not match the option length");
    }
    let infos = rest.chunks_exact(2).map(|c| be_u16(c, 0)).collect();
    Ok(InfoRequest { name, infos })
}

fn lossy(data: &[u8]) -> String {
    String::from_utf8_lossy(&data[..data.len().min(256)]).into_owned()
}

fn unsupported_message(option: u32) -> String {
    let what = match option {
        opt::STARTTLS => "TLS is not supported by iolab target",
        opt::LIST_META_CONTEXT | opt::SET_META_CONTEXT => {
            "block status (meta contexts) is not supported"
        }
        opt::EXTENDED_HEADERS => "extended headers are not supported",
        _ => "unknown option",
    };
    format!("option {option}: {what}")
}

#[cfg(test)]
mod tests;
