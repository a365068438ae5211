//! Option rows for the data a job writes and its verification (fio's
//! buffer and verify options). Part of the one option table (see `table`).

use super::val::{parse_pattern, put, Val};
use super::values;
use super::DefaultValue::{Note, Value};
use super::OptionDef;
use super::OptionKind::*;
use crate::error::JobError;

pub(super) static DATA_OPTIONS: &[OptionDef] = &[
    // --- buffer contents ------------------------------------------------
    OptionDef {
        name: "buffer_pattern",
        set: |d, v| {
            put(
                &mut d.data.buffer_pattern,
                v.wrap(parse_pattern(v.text())).map(Some),
            )
        },
        aliases: &[],
        kind: Text,
        default: Note("none: buffers hold random bytes"),
        unit: "",
        help: "Fill write buffers with this pattern, repeated: hex (0xdeadbeef), a quoted \
               string (\"abc\") or a decimal number (its bytes, least significant first).",
    },
    OptionDef {
        name: "zero_buffers",
        set: |d, v| put(&mut d.data.zero_buffers, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "Fill write buffers with zeros.",
    },
    OptionDef {
        name: "refill_buffers",
        set: |d, v| put(&mut d.data.refill_buffers, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "Give every write fresh random content (costs CPU per write).",
    },
    OptionDef {
        name: "scramble_buffers",
        set: |d, v| put(&mut d.data.scramble_buffers, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("1"),
        unit: "",
        help: "Stamp each write's offset and a counter into every 512-byte sector of its \
               random buffer, so no two written blocks are identical (cheaper than \
               refill_buffers). No effect on zero or pattern buffers.",
    },
    OptionDef {
        name: "buffer_compress_percentage",
        set: |d, v| put(&mut d.data.compress_pct, v.percent()),
        aliases: &[],
        kind: Int,
        default: Value("0"),
        unit: "%",
        help: "Make write buffers compress by about this much: each buffer_compress_chunk \
               is random bytes followed by this share of zeros (or buffer_pattern). \
               Implies fresh content per write.",
    },
    OptionDef {
        name: "buffer_compress_chunk",
        set: |d, v| {
            put(
                &mut d.data.compress_chunk,
                v.size().and_then(|n| v.positive(n)),
            )
        },
        aliases: &[],
        kind: Size,
        default: Value("512"),
        unit: "bytes",
        help: "Granularity of buffer_compress_percentage.",
    },
    OptionDef {
        name: "dedupe_percentage",
        set: |d, v| put(&mut d.data.dedupe_pct, v.percent()),
        aliases: &[],
        kind: Int,
        default: Value("0"),
        unit: "%",
        help: "Share of writes whose block repeats the content of an earlier write (the \
               rest are unique). Implies fresh content per write.",
    },
    // --- verification ---------------------------------------------------
    OptionDef {
        name: "verify",
        set: |d, v| put(&mut d.data.verify, v.wrap(values::parse_verify(v.text()))),
        aliases: &[],
        kind: Choice(&[
            "0",
            "crc32c",
            "crc32c-intel",
            "crc64",
            "crc32",
            "crc16",
            "crc7",
            "md5",
            "sha1",
            "sha256",
            "xxhash",
            "meta",
            "pattern",
            "null",
        ]),
        default: Value("0"),
        unit: "",
        help: "Check written data when it is read back: a header (offset, length, seed) per \
               verify_interval plus a digest of the data; meta checks the header only, \
               pattern compares every byte with verify_pattern, null writes headers but \
               checks nothing. crc32, crc16 and crc7 are fio's variants (crc32 is not \
               zlib's). A write job reads everything back after writing (do_verify); \
               a read job checks what it reads. iolab's header is its own: fio cannot \
               verify iolab's data nor iolab fio's.",
    },
    OptionDef {
        name: "verify_pattern",
        set: |d, v| {
            put(
                &mut d.data.verify_pattern,
                v.wrap(parse_pattern(v.text())).map(Some),
            )
        },
        aliases: &[],
        kind: Text,
        default: Note("none"),
        unit: "",
        help: "Data to write and expect (syntax as buffer_pattern); alone it means \
               verify=pattern (as in fio).",
    },
    OptionDef {
        name: "do_verify",
        set: |d, v| put(&mut d.data.do_verify, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("1"),
        unit: "",
        help: "Run the verify phase after writing; 0 writes the headers only.",
    },
    OptionDef {
        name: "verify_only",
        set: |d, v| put(&mut d.data.verify_only, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "Do not write: read what an earlier run of this job wrote and verify it.",
    },
    OptionDef {
        name: "verify_fatal",
        set: |d, v| put(&mut d.data.verify_fatal, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "End the job at the first mismatch; by default every block is checked and \
               the job then ends with an error naming the first mismatch and the count.",
    },
    OptionDef {
        name: "verify_backlog",
        set: |d, v| put(&mut d.data.verify_backlog, v.size()),
        aliases: &[],
        kind: Int,
        default: Value("0"),
        unit: "blocks",
        help: "Verify every N written blocks as the job goes, instead of after it.",
    },
    OptionDef {
        name: "trim_percentage",
        set: |d, v| put(&mut d.data.trim_pct, v.percent()),
        aliases: &[],
        kind: Int,
        default: Value("0"),
        unit: "%",
        help: "With verify and trim_backlog: the share of the written blocks, drawn per \
               block, that are also trimmed while the job writes (fio's verify-trim); the \
               verify phase then reads them back as zeroes (trim_verify_zero).",
    },
    OptionDef {
        name: "trim_backlog",
        set: |d, v| put(&mut d.data.trim_backlog, v.size()),
        aliases: &[],
        kind: Int,
        default: Value("0"),
        unit: "blocks",
        help: "With trim_percentage: trim the blocks chosen so far every N written blocks.",
    },
    OptionDef {
        name: "trim_backlog_batch",
        set: |d, v| put(&mut d.data.trim_backlog_batch, v.size()),
        aliases: &[],
        kind: Int,
        default: Value("0"),
        unit: "blocks",
        help: "Trims issued at each trim_backlog point (0: trim_backlog of them).",
    },
    OptionDef {
        name: "trim_verify_zero",
        set: |d, v| put(&mut d.data.trim_verify_zero, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("1"),
        unit: "",
        help: "Read trimmed blocks back in the verify phase and require zeroes (a file's \
               punched hole and iolab target's memory export read back zero; a block device \
               or another NBD server need not); 0 drops them from the verify log.",
    },
    OptionDef {
        name: "verify_interval",
        set: |d, v| {
            put(
                &mut d.data.verify_interval,
                v.size().and_then(|n| v.positive(n)),
            )
        },
        aliases: &[],
        kind: Size,
        default: Note("the smallest block size"),
        unit: "bytes",
        help: "Bytes per header and digest; must divide every block size and hold the \
               64-byte header.",
    },
    OptionDef {
        name: "verify_offset",
        set: |d, v| put(&mut d.data.verify_offset, v.size()),
        aliases: &[],
        kind: Size,
        default: Value("0"),
        unit: "bytes",
        help: "Put the header at this offset of each chunk (swapped with the data there).",
    },
    OptionDef {
        name: "verify_dump",
        set: |d, v| put(&mut d.data.verify_dump, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "On a mismatch, write the chunk as found and as expected next to the file \
               (FILE.OFFSET.received / .expected).",
    },
    OptionDef {
        name: "verify_state_save",
        // fio writes a verify state file when a job stops in its write
        // phase, for a later verify_state_load; iolab keeps no such file, so
        // only 0 (save nothing) has the meaning fio gives it.
        set: |_, v| {
            only_off(
                v,
                "iolab does not save verify state files; set verify_state_save=0",
            )
        },
        aliases: &[],
        kind: Bool,
        default: Note("0: iolab saves no verify state (fio's default is 1)"),
        unit: "",
        help: "Only 0 is accepted: iolab never writes fio's verify state files.",
    },
    OptionDef {
        name: "verify_state_load",
        set: |_, v| {
            only_off(
                v,
                "iolab does not load verify state files; set verify_state_load=0",
            )
        },
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "Only 0 is accepted: iolab never reads fio's verify state files.",
    },
];

/// A flag of which iolab offers only the "off" meaning: 1 is refused with
/// `reason`, never accepted and ignored.
fn only_off(v: &Val<'_>, reason: &str) -> Result<(), JobError> {
    match v.flag()? {
        false => Ok(()),
        true => Err(v.invalid(reason)),
    }
}
