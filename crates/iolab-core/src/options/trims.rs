//! What a job that trims (`rw=trim`, `randtrim`, `trimwrite`,
//! `randtrimwrite`) may combine with, and the third (trim) value of the
//! per-direction options (`bs=4k,8k,16k`).
//!
//! iolab's trims take the write slot's per-direction options
//! ([`IoDir::option_slot`]): a trim-only job has no writes, so its trim
//! value is the write slot's; in a trimwrite job each write repeats the
//! trim's offset and length, so they must agree. A third value that would
//! make them differ is refused by name rather than dropped.

use super::draft::Draft;
use crate::error::JobError;
use crate::job::{BsSpec, IoDir, RwMix, TrimMode, VerifyKind, ZoneMode};

/// A `read,write,trim` value's parts as written, kept by the draft until
/// `rw=` is known.
#[derive(Debug, Clone)]
pub(crate) struct TrimValue {
    /// The option as the user wrote it (`bs`, `blocksize`, …).
    pub written: String,
    pub write: Option<String>,
    pub trim: String,
}

fn conflict(text: String) -> Result<(), JobError> {
    Err(JobError::Conflict(text))
}

pub(super) fn check(d: &mut Draft, rw: RwMix) -> Result<(), JobError> {
    verify_trims(d, rw);
    let values = std::mem::take(&mut d.trim_values);
    if !rw.does(IoDir::Trim) {
        for v in values {
            // fio ignores the value then too. Said, not dropped silently.
            d.warnings.push(format!(
                "{}'s third value ({}) is for trims and has no effect: this job issues no \
                 trims (fio ignores it too)",
                v.written, v.trim
            ));
        }
        return Ok(());
    }
    for v in values {
        match (&v.write, rw.trim) {
            (Some(w), TrimMode::ThenWrite) if *w != v.trim => {
                return conflict(format!(
                    "{}: the write value ({w}) and the trim value ({}) differ, but in a trimwrite \
                     job each write repeats the trim before it; give them the same value",
                    v.written, v.trim
                ))
            }
            (Some(w), TrimMode::Only) if *w != v.trim => {
                return conflict(format!(
                    "{}: iolab's trims use the write value ({w}), and this job issues no \
                     writes; write the trim value ({}) as the second one",
                    v.written, v.trim
                ))
            }
            _ => {}
        }
    }
    let engine = d.ioengine;
    if !engine.caps().trims {
        return conflict(format!(
            "ioengine={} cannot trim (rw={}); use an engine that moves data, e.g. psync, \
             io_uring or nbd",
            engine.name(),
            rw_name(rw)
        ));
    }
    if d.data.verify != VerifyKind::Off {
        return conflict(format!(
            "verify with rw={} is not offered: iolab checks no trimmed blocks \
             (trim_verify_zero); drop verify",
            rw_name(rw)
        ));
    }
    if d.zones.mode == ZoneMode::Zbd {
        // fio's zbd trims reset a zone each, from its start: one zone per I/O.
        if rw.trim == TrimMode::ThenWrite {
            return conflict(format!(
                "rw={} with zonemode=zbd: a zone is reset by a trim and then written from its \
                 start; use rw=trim or randtrim beside a writing job",
                rw_name(rw)
            ));
        }
        let zone = d.zones.size_bytes;
        if d.bs[IoDir::Trim.option_slot()] != BsSpec::Fixed(zone) {
            return conflict(format!(
                "with zonemode=zbd each trim resets one zone: give bs=zonesize ({zone} bytes)"
            ));
        }
    }
    if d.data.sprandom {
        return conflict("sprandom=1 places writes; it does not go with trims".into());
    }
    if d.replay.read_iolog.is_some() {
        return conflict(
            "read_iolog replays the log's own directions; drop rw= trims beside it".into(),
        );
    }
    Ok(())
}

/// fio's verify-trim (`trim_percentage`, `trim_backlog`, …) needs verify,
/// both of those two, and a job whose writes are logged for the verify
/// phase; otherwise it does nothing, in fio as here, and says so.
fn verify_trims(d: &mut Draft, rw: RwMix) {
    let names = [
        "trim_percentage",
        "trim_backlog",
        "trim_backlog_batch",
        "trim_verify_zero",
    ];
    let given: Vec<&str> = names
        .into_iter()
        .filter(|o| d.explicit.contains(o))
        .collect();
    if given.is_empty() {
        return;
    }
    let why = if d.data.verify == VerifyKind::Off {
        Some("without verify")
    } else if d.data.trim_pct == 0 {
        Some("without trim_percentage")
    } else if d.data.trim_backlog == 0 {
        Some("without trim_backlog (fio trims only at its backlog points)")
    } else if !rw.does(IoDir::Write) || d.data.verify_only || !d.data.do_verify {
        Some("in a job whose writes are not verified")
    } else {
        None
    };
    if let Some(why) = why {
        d.warnings
            .push(format!("{} no effect {why}", super::data::list_has(&given)));
        d.data.trim_pct = 0;
        d.data.trim_backlog = 0;
    }
}

fn rw_name(rw: RwMix) -> &'static str {
    use crate::job::Pattern::*;
    match (rw.pattern, rw.trim) {
        (Sequential, TrimMode::ThenWrite) => "trimwrite",
        (Random, TrimMode::ThenWrite) => "randtrimwrite",
        (Sequential, _) => "trim",
        (Random, _) => "randtrim",
    }
}
