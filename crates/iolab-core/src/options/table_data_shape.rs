//! Option rows for how the data and offsets of a job are shaped beyond the
//! buffer options: dedupe modes, the `sequence` distribution's stride,
//! serialized overlapping I/O and the verify write-sequence check. Part of
//! the one option table (see `table`); the checks are in `data_shape`.

use super::val::put;
use super::DefaultValue::Value;
use super::OptionDef;
use super::OptionKind::*;
use crate::job::DedupeMode;

pub(super) static DATA_SHAPE_OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "dedupe_mode",
        set: |d, v| {
            let mode = match v.text() {
                "repeat" => Ok(DedupeMode::Repeat),
                "working_set" => Ok(DedupeMode::WorkingSet),
                _ => Err(v.invalid("expected repeat or working_set")),
            };
            put(&mut d.data.dedupe_mode, mode)
        },
        aliases: &[],
        kind: Choice(&["repeat", "working_set"]),
        default: Value("repeat"),
        unit: "",
        help: "What a duplicate write (dedupe_percentage) repeats: repeat = the last unique \
               write; working_set = a block drawn from the first unique writes, as many as \
               dedupe_working_set_percentage of the region holds.",
    },
    OptionDef {
        name: "dedupe_working_set_percentage",
        set: |d, v| put(&mut d.data.dedupe_working_set_pct, v.percent()),
        aliases: &[],
        kind: Int,
        default: Value("5"),
        unit: "%",
        help: "Size of the dedupe working set, in percent of the worker's region \
               (dedupe_mode=working_set).",
    },
    OptionDef {
        name: "dedupe_global",
        set: |d, v| put(&mut d.data.dedupe_global, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "Share the dedupe working set among all workers that set this: each one's \
               working set is spread evenly over the unique blocks of all of them, so \
               duplicates span files (dedupe_mode=working_set).",
    },
    OptionDef {
        name: "random_sequence_stride",
        set: |d, v| put(&mut d.random_sequence_stride, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "With random_distribution=sequence:...: 0 repeats the listed block indices; \
               1 moves each round on by the sequence's length (2,0,1 then 5,3,4 ...), to the \
               end of the region.",
    },
    OptionDef {
        name: "serialize_overlap",
        set: |d, v| put(&mut d.data.serialize_overlap, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "Never have two in-flight I/Os of a worker overlap: an I/O that would overlap \
               one in flight waits for it (lowers the depth achieved; avoids the races that \
               make verify fail on overlapping writes).",
    },
    OptionDef {
        name: "verify_write_sequence",
        set: |d, v| put(&mut d.data.verify_write_sequence, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("1"),
        unit: "",
        help: "Check that a verified block holds the last write to it (its seed), not an \
               older intact one. 0 accepts any intact chunk whose header names its offset.",
    },
];
