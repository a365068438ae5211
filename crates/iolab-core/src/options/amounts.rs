//! Checks of how much a job does (part of `finish`): io_size over the
//! region's passes, and cpuio, which does no I/O at all.

use super::draft::Draft;
use crate::engines::Target;
use crate::error::JobError;

/// io_size beyond one pass repeats the region, as fio does: loops is
/// raised to cover it, and the worker stops once io_size is issued.
/// Without size the region is the file from offset to its end (fio's rule,
/// e.g. examples/cross-stripe-verify.fio): its length is known only at run
/// time, so the generator raises loops there (`IoGen::new`).
pub(super) fn amounts(d: &mut Draft) -> Result<(), JobError> {
    let Some(io_size) = d.amounts.io_size else {
        return Ok(());
    };
    if d.explicit.contains("loops") && d.loops > 1 {
        d.warnings.push(format!(
            "loops={} has no effect: io_size={io_size} decides how much is done",
            d.loops
        ));
    }
    d.loops = match d.size {
        Some(size) => u32::try_from(io_size.div_ceil(size).max(1)).unwrap_or(u32::MAX),
        None => 1,
    };
    Ok(())
}

/// cpuio does no I/O: it needs a load and a runtime (it has no size to
/// finish), and its region is a placeholder of one block, which it never
/// touches.
pub(super) fn cpuio(d: &mut Draft) -> Result<(), JobError> {
    if d.ioengine.caps().target != Target::NoIo {
        return Ok(());
    }
    if d.engine.cpuload == 0 {
        return Err(JobError::Conflict(
            "ioengine=cpuio needs cpuload (percent of a CPU to burn), e.g. cpuload=50".into(),
        ));
    }
    if d.runtime_ns == 0 {
        return Err(JobError::Conflict(
            "ioengine=cpuio needs runtime (it does no I/O that could finish), e.g. runtime=10"
                .into(),
        ));
    }
    if d.filename.is_some() {
        d.warnings
            .push("filename has no effect with ioengine=cpuio (it does no I/O)".into());
        d.filename = None;
    }
    d.size.get_or_insert(d.bs[0].max().max(d.bs[1].max()));
    d.time_based = true;
    Ok(())
}
