//! Checks of the buffer and verify options against the rest of the job
//! (part of `finish`): fio's implied settings (verify_pattern alone means
//! verify=pattern), the verify interval, and warnings for buffer settings
//! that cannot act.

use super::draft::Draft;
use crate::engines::Target;
use crate::error::JobError;
use crate::job::{IoDir, RwMix, VerifyKind, VERIFY_HEADER_BYTES};

fn conflict(text: String) -> Result<(), JobError> {
    Err(JobError::Conflict(text))
}

pub(super) fn check(d: &mut Draft, rw: RwMix) -> Result<(), JobError> {
    if d.data.verify_pattern.is_some() && !d.explicit.contains("verify") {
        d.data.verify = VerifyKind::Pattern;
    }
    let writes = rw.does(IoDir::Write);
    buffers(d, writes);
    let v = d.data.verify;
    if v == VerifyKind::Off {
        let set: Vec<&str> = ["do_verify", "verify_only", "verify_fatal", "verify_backlog"]
            .into_iter()
            .chain(["verify_interval", "verify_offset", "verify_dump"])
            .filter(|o| d.explicit.contains(o))
            .collect();
        if !set.is_empty() {
            d.warnings
                .push(format!("{} no effect without verify", list_has(&set)));
        }
        return Ok(());
    }
    // A read/write mix verifies what it wrote (its reads are not checked),
    // as fio does; see the engine's worker/data.rs.
    if d.ioengine.caps().target == Target::Discarded {
        return conflict(
            "verify needs an engine that moves data; ioengine=null moves none".to_string(),
        );
    }
    if v == VerifyKind::Pattern && d.data.verify_pattern.is_none() {
        return conflict("verify=pattern needs verify_pattern (the bytes to expect)".into());
    }
    let dir = if writes { IoDir::Write } else { IoDir::Read };
    let bs = &d.bs[dir as usize];
    let interval = match d.data.verify_interval {
        0 => bs.min(),
        n => n,
    };
    let sizes: Vec<u64> = match bs {
        crate::job::BsSpec::Split(v) => v.iter().map(|(b, _)| *b).collect(),
        // Range sizes are multiples of the minimum.
        other => vec![other.min(), other.max()],
    };
    if let Some(b) = sizes.iter().find(|b| !b.is_multiple_of(interval)) {
        return conflict(format!(
            "verify_interval={interval} must divide every block size, but {b} is not a multiple"
        ));
    }
    if v != VerifyKind::Pattern && d.data.verify_offset + VERIFY_HEADER_BYTES > interval {
        return conflict(format!(
            "the {VERIFY_HEADER_BYTES}-byte verify header at verify_offset={} does not fit \
             in verify_interval={interval}",
            d.data.verify_offset
        ));
    }
    d.data.verify_interval = interval;
    if writes && d.runtime_ns > 0 && d.data.verify_backlog == 0 && d.data.do_verify {
        d.warnings.push(
            "verify reads back after the writes, within runtime: what runtime cuts off is not \
             verified (verify_backlog verifies as the job goes)"
                .into(),
        );
    }
    Ok(())
}

/// Buffer options: which one decides, and which cannot act.
fn buffers(d: &mut Draft, writes: bool) {
    let given: Vec<&str> = [
        "buffer_pattern",
        "zero_buffers",
        "refill_buffers",
        "buffer_compress_percentage",
        "dedupe_percentage",
    ]
    .into_iter()
    .filter(|o| d.explicit.contains(o))
    .collect();
    if given.is_empty() {
        return;
    }
    let why = if !writes && !d.data.verify_only {
        "the job does not write"
    } else if d.data.verify != VerifyKind::Off {
        "verify decides what is written (use verify_pattern for the data)"
    } else {
        if d.data.buffer_pattern.is_some() && d.data.zero_buffers {
            d.warnings
                .push("zero_buffers has no effect: buffer_pattern decides the contents".into());
            d.data.zero_buffers = false;
        }
        return;
    };
    d.warnings
        .push(format!("{} no effect: {why}", list_has(&given)));
}

pub(super) fn list_has(names: &[&str]) -> String {
    let verb = if names.len() == 1 { "has" } else { "have" };
    format!("{} {verb}", names.join(", "))
}
