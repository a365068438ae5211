use super::*;
use crate::proto::{rep, OPT_REPLY_MAGIC};

struct Two;

const EXPORTS: [(&str, &str, u64); 2] = [("disk0", "first disk", 1 << 20), ("disk1", "", 4096)];

impl Catalog for Two {
    fn len(&self) -> usize {
        EXPORTS.len()
    }
    fn get(&self, index: usize) -> Option<ExportInfo<'_>> {
        EXPORTS
            .get(index)
            .map(|&(name, description, size_bytes)| ExportInfo {
                index,
                name,
                description,
                size_bytes,
                tflags: tflags::HAS_FLAGS | tflags::SEND_FLUSH,
                min_block_bytes: 1,
                preferred_block_bytes: 4096,
                max_payload_bytes: 1 << 25,
            })
    }
    fn find(&self, name: &str) -> Option<ExportInfo<'_>> {
        let name = if name.is_empty() { "disk0" } else { name };
        (0..self.len())
            .find(|&i| EXPORTS[i].0 == name)
            .and_then(|i| self.get(i))
    }
}

/// Split option replies into (option, type, data).
fn replies(mut b: &[u8]) -> Vec<(u32, u32, Vec<u8>)> {
    let mut v = Vec::new();
    while !b.is_empty() {
        assert_eq!(be_u64(b, 0), OPT_REPLY_MAGIC);
        let len = be_u32(b, 16) as usize;
        v.push((be_u32(b, 8), be_u32(b, 12), b[20..20 + len].to_vec()));
        b = &b[20 + len..];
    }
    v
}

fn info_data(name: &str, infos: &[u16]) -> Vec<u8> {
    let mut d = (name.len() as u32).to_be_bytes().to_vec();
    d.extend_from_slice(name.as_bytes());
    d.extend_from_slice(&(infos.len() as u16).to_be_bytes());
    for i in infos {
        d.extend_from_slice(&i.to_be_bytes());
    }
    d
}

fn neg() -> Negotiation {
    Negotiation::new(ClientFlags {
        fixed_newstyle: true,
        no_zeroes: true,
    })
}

#[test]
fn greeting_is_fixed_newstyle_with_no_zeroes() {
    let g = greeting();
    assert_eq!(&g[0..8], b"NBDMAGIC");
    assert_eq!(&g[8..16], b"IHAVEOPT");
    assert_eq!(be_u16(&g, 16), 3);
}

#[test]
fn client_flags_reject_unknown_bits() {
    assert_eq!(
        parse_client_flags([0, 0, 0, 3]).unwrap(),
        ClientFlags {
            fixed_newstyle: true,
            no_zeroes: true
        }
    );
    assert_eq!(
        parse_client_flags([0, 0, 0, 0]).unwrap(),
        ClientFlags::default()
    );
    assert_eq!(
        parse_client_flags([0, 0, 0, 4]),
        Err(ProtoError::UnknownClientFlags(4))
    );
}

#[test]
fn option_header_checks_magic_and_length() {
    let mut h = [0u8; 16];
    h[0..8].copy_from_slice(b"IHAVEOPT");
    h[8..12].copy_from_slice(&7u32.to_be_bytes());
    h[12..16].copy_from_slice(&10u32.to_be_bytes());
    assert_eq!(
        parse_option_header(&h).unwrap(),
        OptionHeader {
            option: 7,
            len_bytes: 10
        }
    );
    h[12..16].copy_from_slice(&(MAX_OPTION_DATA_BYTES + 1).to_be_bytes());
    assert!(matches!(
        parse_option_header(&h),
        Err(ProtoError::OptionTooLong { .. })
    ));
    h[0] = b'X';
    assert!(matches!(
        parse_option_header(&h),
        Err(ProtoError::BadMagic { .. })
    ));
}

#[test]
fn go_sends_export_info_block_size_and_ack() {
    let mut out = Vec::new();
    let data = info_data("disk0", &[info::NAME, info::DESCRIPTION, info::BLOCK_SIZE]);
    let o = neg().handle(&Two, false, opt::GO, &data, &mut out);
    let Outcome::Transmit(sel) = o else {
        panic!("{o:?}")
    };
    assert_eq!(sel.index, 0);
    assert_eq!(sel.tflags, tflags::HAS_FLAGS | tflags::SEND_FLUSH);
    let r = replies(&out);
    assert_eq!(r.len(), 5);
    assert_eq!(r[0].1, rep::INFO);
    assert_eq!(be_u16(&r[0].2, 0), info::EXPORT);
    assert_eq!(be_u64(&r[0].2, 2), 1 << 20);
    assert_eq!(r[1].2[2..], *b"disk0");
    assert_eq!(r[2].2[2..], *b"first disk");
    let bs = &r[3].2;
    assert_eq!(
        (be_u16(bs, 0), be_u32(bs, 2), be_u32(bs, 6), be_u32(bs, 10)),
        (3, 1, 4096, 1 << 25)
    );
    assert_eq!(r[4], (opt::GO, rep::ACK, vec![]));
}

#[test]
fn info_continues_and_empty_name_is_the_default_export() {
    let mut out = Vec::new();
    let o = neg().handle(&Two, false, opt::INFO, &info_data("", &[]), &mut out);
    assert_eq!(o, Outcome::Continue);
    let r = replies(&out);
    assert_eq!(be_u64(&r[0].2, 2), 1 << 20);
    assert_eq!(r.last().unwrap().1, rep::ACK);
}

#[test]
fn unknown_export_and_malformed_info_are_errors_not_disconnects() {
    let mut n = neg();
    let mut out = Vec::new();
    assert_eq!(
        n.handle(&Two, false, opt::GO, &info_data("nope", &[]), &mut out),
        Outcome::Continue
    );
    assert_eq!(replies(&out)[0].1, rep::ERR_UNKNOWN);
    for bad in [vec![0u8; 3], vec![0, 0, 0, 9, b'a', 0, 0], {
        let mut d = info_data("disk0", &[1]);
        d.pop();
        d
    }] {
        out.clear();
        assert_eq!(
            n.handle(&Two, false, opt::INFO, &bad, &mut out),
            Outcome::Continue
        );
        assert_eq!(replies(&out)[0].1, rep::ERR_INVALID, "{bad:?}");
    }
}

#[test]
fn export_name_sends_size_flags_and_zeroes_unless_no_zeroes() {
    let mut out = Vec::new();
    let o = neg().handle(&Two, false, opt::EXPORT_NAME, b"disk1", &mut out);
    assert!(matches!(o, Outcome::Transmit(Selected { index: 1, .. })));
    assert_eq!(out.len(), 10);
    assert_eq!(be_u64(&out, 0), 4096);
    let mut zeroes = Negotiation::new(ClientFlags {
        fixed_newstyle: true,
        no_zeroes: false,
    });
    out.clear();
    zeroes.handle(&Two, false, opt::EXPORT_NAME, b"disk1", &mut out);
    assert_eq!(out.len(), 134);
    let o = neg().handle(&Two, false, opt::EXPORT_NAME, b"nope", &mut out);
    assert!(matches!(
        o,
        Outcome::Disconnect(ProtoError::UnknownExportName(_))
    ));
}

#[test]
fn list_names_every_export_then_acks() {
    let mut out = Vec::new();
    neg().handle(&Two, false, opt::LIST, &[], &mut out);
    let r = replies(&out);
    assert_eq!(r.len(), 3);
    assert_eq!(r[0].1, rep::SERVER);
    assert_eq!(be_u32(&r[0].2, 0), 5);
    assert_eq!(&r[0].2[4..], b"disk0first disk");
    assert_eq!(&r[1].2[4..], b"disk1");
    assert_eq!(r[2].1, rep::ACK);
    out.clear();
    neg().handle(&Two, false, opt::LIST, &[1], &mut out);
    assert_eq!(replies(&out)[0].1, rep::ERR_INVALID);
}

#[test]
fn structured_replies_enable_df_once() {
    let mut n = neg();
    let mut out = Vec::new();
    n.handle(&Two, false, opt::STRUCTURED_REPLY, &[], &mut out);
    assert_eq!(replies(&out)[0].1, rep::ACK);
    out.clear();
    n.handle(&Two, false, opt::STRUCTURED_REPLY, &[], &mut out);
    assert_eq!(replies(&out)[0].1, rep::ERR_INVALID);
    out.clear();
    let Outcome::Transmit(sel) = n.handle(&Two, false, opt::GO, &info_data("disk1", &[]), &mut out)
    else {
        panic!()
    };
    assert!(sel.structured_replies);
    assert_ne!(sel.tflags & tflags::SEND_DF, 0);
}

#[test]
fn unknown_options_are_unsupported_and_abort_is_acked() {
    let mut n = neg();
    for o in [
        opt::STARTTLS,
        opt::SET_META_CONTEXT,
        opt::EXTENDED_HEADERS,
        4242,
    ] {
        let mut out = Vec::new();
        assert_eq!(
            n.handle(&Two, false, o, b"xyz", &mut out),
            Outcome::Continue
        );
        let r = replies(&out);
        assert_eq!((r[0].0, r[0].1), (o, rep::ERR_UNSUP));
        assert!(!r[0].2.is_empty(), "error replies carry a message");
    }
    let mut out = Vec::new();
    assert_eq!(
        n.handle(&Two, false, opt::ABORT, &[], &mut out),
        Outcome::Abort
    );
    assert_eq!(replies(&out)[0].1, rep::ACK);
}

#[test]
fn shutting_down_refuses_everything_but_abort() {
    let mut out = Vec::new();
    assert_eq!(
        neg().handle(&Two, true, opt::GO, &info_data("disk0", &[]), &mut out),
        Outcome::Continue
    );
    assert_eq!(replies(&out)[0].1, rep::ERR_SHUTDOWN);
    out.clear();
    assert_eq!(
        neg().handle(&Two, true, opt::ABORT, &[], &mut out),
        Outcome::Abort
    );
}

/// What nbdinfo --map and qemu-img ask for: structured replies are
/// granted, the base:allocation meta context (block status) is refused
/// with ERR_UNSUP, and GO still selects the export with structured
/// replies on, so the client goes on without block status.
#[test]
fn structured_replies_without_meta_contexts() {
    let mut n = neg();
    let mut out = Vec::new();
    n.handle(&Two, false, opt::STRUCTURED_REPLY, &[], &mut out);
    assert_eq!(replies(&out)[0].1, rep::ACK);
    let mut query = info_data("disk0", &[]);
    query.truncate(4 + "disk0".len()); // name only; then one query
    query.extend_from_slice(&1u32.to_be_bytes());
    query.extend_from_slice(&16u32.to_be_bytes());
    query.extend_from_slice(b"base:allocation");
    for o in [opt::LIST_META_CONTEXT, opt::SET_META_CONTEXT] {
        out.clear();
        assert_eq!(
            n.handle(&Two, false, o, &query, &mut out),
            Outcome::Continue
        );
        assert_eq!(replies(&out)[0].1, rep::ERR_UNSUP);
    }
    out.clear();
    let go = n.handle(&Two, false, opt::GO, &info_data("disk0", &[]), &mut out);
    let Outcome::Transmit(sel) = go else {
        panic!("GO after a refused meta context: {go:?}")
    };
    assert!(sel.structured_replies);
    assert_eq!(replies(&out).last().unwrap().1, rep::ACK);
}
