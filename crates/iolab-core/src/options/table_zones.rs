//! Option rows of fio's zone modes (`zonemode` and its sizes and limits)
//! and of `fill_device`/`fill_fs`. Part of the one option table (see
//! `table`); how they bear on each other is checked in `zones`.

use super::val::{put, Val};
use super::DefaultValue::{Note, Value};
use super::OptionDef;
use super::OptionKind::*;
use crate::error::JobError;
use crate::job::ZoneMode;
use crate::units::parse_float;

/// A fraction from 0 to 1 (fio's `zone_reset_threshold`/`_frequency`).
fn fraction(v: &Val<'_>) -> Result<f64, JobError> {
    let f = v.wrap(parse_float(v.text()))?;
    if !(0.0..=1.0).contains(&f) {
        return Err(v.invalid("must be a number from 0 to 1"));
    }
    Ok(f)
}

/// fio's zone suffix (`size=8z`, `offset=524z`): a count of zones of
/// `zonesize`, or `None` when the value is not written that way.
pub(super) fn zone_count(v: &Val<'_>) -> Option<Result<u64, JobError>> {
    let digits = v.text().strip_suffix('z')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(v.wrap(crate::units::parse_uint(digits)))
}

pub(super) static ZONE_OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "zonemode",
        set: |d, v| put(&mut d.zones.mode, v.wrap(ZoneMode::parse(v.text()))),
        aliases: &[],
        kind: Choice(&["none", "strided", "zbd"]),
        default: Note("strided when zonesize is given, else none (as in fio)"),
        unit: "",
        help: "strided: I/O stays in one zone of zonerange bytes until zonesize bytes are \
               moved there, then moves zonerange + zoneskip bytes on (wrapping to the \
               region's start). zbd: sequential-write-required zones of zonesize bytes \
               emulated over a regular file: writes go to a zone's write pointer, even \
               for random I/O; reads stay below it; the region is cut to whole zones (as \
               fio cuts it). A real zoned block device is refused.",
    },
    OptionDef {
        name: "zonesize",
        set: |d, v| {
            put(
                &mut d.zones.size_bytes,
                v.size().and_then(|n| v.positive(n)),
            )
        },
        aliases: &[],
        kind: Size,
        default: Note("none"),
        unit: "bytes",
        help: "strided: bytes moved in a zone before skipping on (more than zonerange \
               goes over the zone again). zbd: the size of one zone.",
    },
    OptionDef {
        name: "zonerange",
        set: |d, v| {
            put(
                &mut d.zones.range_bytes,
                v.size().and_then(|n| v.positive(n)),
            )
        },
        aliases: &[],
        kind: Size,
        default: Note("zonesize"),
        unit: "bytes",
        help: "strided: the size of one zone; random offsets are drawn inside it. zbd: \
               must equal zonesize when given.",
    },
    OptionDef {
        name: "zoneskip",
        set: |d, v| put(&mut d.zones.skip_bytes, v.size()),
        aliases: &[],
        kind: Size,
        default: Value("0"),
        unit: "bytes",
        help: "strided: bytes skipped after zonesize bytes were moved in a zone. zbd: \
               must be 0.",
    },
    OptionDef {
        name: "zonecapacity",
        set: |d, v| {
            put(
                &mut d.zones.capacity_bytes,
                v.size().and_then(|n| v.positive(n)),
            )
        },
        aliases: &[],
        kind: Size,
        default: Note("zonesize"),
        unit: "bytes",
        help: "zbd: writable bytes from each zone's start (at most zonesize); a zone \
               whose write pointer reaches it is full.",
    },
    OptionDef {
        name: "read_beyond_wp",
        set: |d, v| put(&mut d.zones.read_beyond_wp, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "zbd: let reads go past a zone's write pointer (by default they are moved \
               below it, and a zone without data is not read, as in fio).",
    },
    OptionDef {
        name: "max_open_zones",
        set: |d, v| put(&mut d.zones.max_open_zones, v.u32_min(0)),
        aliases: &[],
        kind: Int,
        default: Value("0"),
        unit: "zones",
        help: "zbd: zones written to at the same time by all workers of a file together \
               (0: no limit); a write to another zone goes to an open one instead.",
    },
    OptionDef {
        name: "job_max_open_zones",
        set: |d, v| put(&mut d.zones.job_max_open_zones, v.u32_min(0)),
        aliases: &[],
        kind: Int,
        default: Value("0"),
        unit: "zones",
        help: "zbd: zones one worker writes to at the same time (0: no limit).",
    },
    OptionDef {
        name: "ignore_zone_limits",
        set: |d, v| put(&mut d.zones.ignore_zone_limits, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "zbd: allow max_open_zones above the device's own limit. Emulated zones \
               have no device limit, so iolab says so in a warning when it is set.",
    },
    OptionDef {
        name: "zone_reset_threshold",
        set: |d, v| put(&mut d.zones.reset_threshold, fraction(v)),
        aliases: &[],
        kind: Text,
        default: Value("0"),
        unit: "fraction",
        help: "zbd: share (0-1) of the region holding written data above which zones are \
               reset as zone_reset_frequency says (garbage-collection load).",
    },
    OptionDef {
        name: "zone_reset_frequency",
        set: |d, v| put(&mut d.zones.reset_frequency, fraction(v)),
        aliases: &[],
        kind: Text,
        default: Value("0"),
        unit: "fraction",
        help: "zbd: once zone_reset_threshold is passed, the zone of every 1/f-th write is \
               reset before the write (0: never).",
    },
    OptionDef {
        name: "fill_device",
        set: |d, v| put(&mut d.zones.fill_device, v.flag()),
        aliases: &["fill_fs"],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "Write until the file system has no space left (ENOSPC or EDQUOT end the \
               job without an error, as in fio) or the device ends. Without size=, the \
               file may grow to the file system's free space. Writes only.",
    },
    OptionDef {
        name: "create_serialize",
        set: |d, v| put(&mut d.zones.create_serialize, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("1"),
        unit: "",
        help: "Lay out the jobs' files one at a time (fio's default). iolab always lays \
               them out one at a time, before the run: 0 is taken with a warning saying so, \
               and refused with zonemode=zbd (as in fio).",
    },
];
