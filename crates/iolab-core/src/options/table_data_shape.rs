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
    OptionDef {
        name: "sprandom",
        set: |d, v| put(&mut d.data.sprandom, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "fio's SPRandom SSD preconditioning (rw=randwrite): write the physical capacity \
               (size × (1 + spr_op)) once, in spr_num_regions regions, rewriting a share of each \
               region's blocks in the next so that region i holds the invalid share of a \
               steady random-write state (Desnoyers' model, as fio). Offsets come from iolab's \
               block permutation in place of fio's LFSR.",
    },
    OptionDef {
        name: "spr_op",
        set: |d, v| {
            let op = v
                .text()
                .parse::<f64>()
                .ok()
                .filter(|x| *x > 0.0 && *x < 1.0);
            let ppm = op.map(|x| (x * 1e6).round() as u32).ok_or_else(|| {
                v.invalid("must be a fraction between 0 and 1 (exclusive), e.g. 0.15")
            });
            put(&mut d.data.spr_op_ppm, ppm)
        },
        aliases: &[],
        kind: Text,
        default: Value("0.15"),
        unit: "",
        help: "sprandom: the drive's over-provisioning ratio, in (0, 1).",
    },
    OptionDef {
        name: "spr_num_regions",
        set: |d, v| put(&mut d.data.spr_num_regions, v.u32_min(1)),
        aliases: &[],
        kind: Int,
        default: Value("100"),
        unit: "",
        help: "sprandom: regions the physical capacity is cut into.",
    },
    OptionDef {
        name: "spr_cs",
        set: |d, v| put(&mut d.data.spr_cs_bytes, v.size()),
        aliases: &[],
        kind: Size,
        default: Value("0"),
        unit: "bytes",
        help: "sprandom: the drive's cache size; when set, the rewrites of a region come at \
               the end of the next one, so the cache never holds a write and its rewrite.",
    },
];
