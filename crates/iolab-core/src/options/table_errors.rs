//! Option rows for what a job does when an I/O fails and which jobs stop
//! when one ends (fio's continue_on_error, ignore_error, error_dump,
//! exit_what), where each clone starts (offset_increment), and torn-write
//! protection (atomic). Part of the one option table (see `table`); the
//! rules are in `job::errors` and checked in `finish`.

use super::val::put;
use super::DefaultValue::{Note, Value};
use super::OptionDef;
use super::OptionKind::*;
use crate::error::JobError;
use crate::job::{ErrorOptions, ExitWhat};

pub(super) static ERROR_OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "continue_on_error",
        set: |d, v| {
            put(
                &mut d.errors.continue_on,
                v.wrap(ErrorOptions::parse_continue_on(v.text())),
            )
        },
        aliases: &[],
        kind: Choice(&["none", "read", "write", "io", "verify", "all", "0", "1"]),
        default: Value("none"),
        unit: "",
        help: "Keep going after a non-fatal failure of these kinds (io = read and write; \
               a verify failure is EILSEQ): by default EIO and EILSEQ, or the errors \
               ignore_error lists. Failures are counted (fio's total_err, first_error); \
               any other failure ends the job, as in fio.",
    },
    OptionDef {
        name: "ignore_error",
        set: |d, v| {
            let (lists, bits) = v.wrap(ErrorOptions::parse_ignore(v.text()))?;
            for (k, list) in lists.into_iter().enumerate() {
                if !list.is_empty() {
                    d.errors.ignore[k] = list;
                }
            }
            d.errors.continue_on |= bits;
            Ok(())
        },
        aliases: &[],
        kind: Text,
        default: Note("EIO and EILSEQ for the kinds continue_on_error names"),
        unit: "",
        help: "READ_LIST,WRITE_LIST,VERIFY_LIST: errno names or numbers separated by ':' \
               (ignore_error=,ENOSPC:122) that do not end the job; a kind given a list \
               continues on exactly those (fio's meaning).",
    },
    OptionDef {
        name: "error_dump",
        set: |d, v| put(&mut d.errors.error_dump, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("1"),
        unit: "",
        help: "Print every failed I/O (file, direction, offset, length, errno) on stderr, \
               non-fatal ones too; 0 prints only the failure that ends the job.",
    },
    OptionDef {
        name: "exit_what",
        set: |d, v| {
            let w = match v.text() {
                "group" => Ok(ExitWhat::Group),
                "stonewall" => Ok(ExitWhat::Stonewall),
                "all" => Ok(ExitWhat::All),
                _ => Err(v.invalid("must be one of group, stonewall, all")),
            };
            put(&mut d.errors.exit_what, w)
        },
        aliases: &[],
        kind: Choice(&["group", "stonewall", "all"]),
        default: Value("group"),
        unit: "",
        help: "What exitall (and exitall_on_error) stops when a worker of this job ends: \
               its stonewall group; every running job (later groups still start); or all \
               jobs, later groups included.",
    },
    OptionDef {
        name: "offset_increment",
        set: |d, v| put(&mut d.offset_increment, v.size_no_pct()),
        aliases: &[],
        kind: Size,
        default: Value("0"),
        unit: "bytes",
        help: "Worker N (numjobs clone, from 0) starts at offset + N x offset_increment, \
               so clones work on disjoint regions of one file.",
    },
    OptionDef {
        name: "atomic",
        set: |d, v| put(&mut d.engine.atomic, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "Torn-write protection: writes carry RWF_ATOMIC (pvsync2, libaio, io_uring; \
               needs direct=1). The run refuses a file whose atomic-write limits (statx \
               STATX_WRITE_ATOMIC) do not cover the write block size, naming them.",
    },
];

/// Checks of these options against the others (called by `finish`).
pub(super) fn check(d: &mut super::draft::Draft, rw: crate::job::RwMix) -> Result<(), JobError> {
    use crate::job::{IoDir, IoEngine};
    let atomic_engines = || IoEngine::names_that(|c| c.atomic).join(", ");
    if d.direct && !d.offset_increment.is_multiple_of(DIRECT_ALIGN_BYTES) {
        return Err(JobError::Conflict(format!(
            "offset_increment={} bytes is not a multiple of {DIRECT_ALIGN_BYTES}, which direct=1 \
             needs for every clone's offset; use a multiple of the block size",
            d.offset_increment
        )));
    }
    if d.offset_increment > 0 && d.numjobs <= 1 {
        d.warnings.push(format!(
            "offset_increment={} has no effect with numjobs=1 (only clones 1, 2, ... move)",
            d.offset_increment
        ));
    }
    if !d.engine.atomic {
        return Ok(());
    }
    if !d.ioengine.caps().atomic {
        return Err(JobError::Conflict(format!(
            "atomic=1 needs an engine that can issue RWF_ATOMIC writes ({}), not ioengine={}",
            atomic_engines(),
            d.ioengine.name()
        )));
    }
    if !rw.does(IoDir::Write) {
        // fio drops the flag too; say so rather than ignore it.
        d.warnings
            .push("atomic=1 has no effect: the job does not write".into());
        d.engine.atomic = false;
        return Ok(());
    }
    if !d.direct {
        return Err(JobError::Conflict(
            "atomic=1 needs direct=1: Linux accepts RWF_ATOMIC only on O_DIRECT writes".into(),
        ));
    }
    Ok(())
}

/// O_DIRECT's smallest alignment (the device may need more; see `finish`).
const DIRECT_ALIGN_BYTES: u64 = 512;
