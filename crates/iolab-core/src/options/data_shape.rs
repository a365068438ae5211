//! Checks of the data-shape options against the rest of the job (part of
//! `finish`): `random_sequence_stride` folded into a `sequence:`
//! distribution, and warnings for dedupe and verify settings that cannot
//! act. Also the parser of `random_distribution=sequence:2,0,1`.

use super::draft::Draft;
use crate::error::JobError;
use crate::job::{BsSpec, DedupeMode, IoDir, Pattern, RandomDistribution, RwMix, VerifyKind};

/// fio's limit on the elements of a `sequence:` distribution.
const SEQUENCE_MAX: usize = 64;

/// `sequence:2,0,1` (the part after the colon): block indices, in order.
pub(super) fn parse_sequence(args: &str) -> Result<RandomDistribution, String> {
    let blocks: Vec<u64> = args
        .split(',')
        .map(|s| {
            s.trim().parse::<u64>().map_err(|_| {
                format!(
                    "sequence element '{}' is not a block index (0, 1, 2, ...)",
                    s.trim()
                )
            })
        })
        .collect::<Result<_, _>>()?;
    if blocks.len() > SEQUENCE_MAX {
        return Err(format!(
            "a sequence holds at most {SEQUENCE_MAX} block indices (as in fio), got {}",
            blocks.len()
        ));
    }
    Ok(RandomDistribution::Sequence {
        blocks,
        stride: false,
    })
}

pub(super) fn check(d: &mut Draft, rw: RwMix) -> Result<(), JobError> {
    sprandom(d, rw)?;
    if let RandomDistribution::Sequence { stride, .. } = &mut d.distribution {
        *stride = d.random_sequence_stride;
    } else if d.explicit.contains("random_sequence_stride") {
        d.warnings.push(
            "random_sequence_stride has no effect without random_distribution=sequence:...".into(),
        );
    }
    let dedupe: Vec<&str> = [
        "dedupe_mode",
        "dedupe_working_set_percentage",
        "dedupe_global",
    ]
    .into_iter()
    .filter(|o| d.explicit.contains(o))
    .collect();
    if d.data.dedupe_pct == 0 && !dedupe.is_empty() {
        d.warnings.push(format!(
            "{} no effect without dedupe_percentage",
            list_has(&dedupe)
        ));
    } else if d.data.dedupe_mode == DedupeMode::Repeat {
        let ws: Vec<&str> = dedupe.into_iter().filter(|o| *o != "dedupe_mode").collect();
        if !ws.is_empty() {
            d.warnings.push(format!(
                "{} no effect with dedupe_mode=repeat (it shapes the working set)",
                list_has(&ws)
            ));
        }
    }
    let seq_given = d.explicit.contains("verify_write_sequence");
    if d.data.verify == VerifyKind::Off && seq_given {
        d.warnings
            .push("verify_write_sequence has no effect without verify".into());
    } else if seq_given
        && d.data.verify_write_sequence
        && (d.data.verify_only || !rw.does(IoDir::Write))
    {
        d.warnings.push(
            "verify_write_sequence=1 has no effect when the job does not write: iolab keeps no \
             record of earlier runs' writes, so a block read back need only be intact"
                .into(),
        );
    }
    Ok(())
}

/// sprandom places every write of a random write job with fixed blocks.
fn sprandom(d: &mut Draft, rw: RwMix) -> Result<(), JobError> {
    let spr = ["spr_op", "spr_num_regions", "spr_cs"];
    if !d.data.sprandom {
        let given: Vec<&str> = spr.into_iter().filter(|o| d.explicit.contains(o)).collect();
        if !given.is_empty() {
            d.warnings
                .push(format!("{} no effect without sprandom=1", list_has(&given)));
        }
        return Ok(());
    }
    let conflict = |why: &str| Err(JobError::Conflict(format!("sprandom=1 {why}")));
    if rw.pattern != Pattern::Random || rw.does(IoDir::Read) {
        return conflict("places the writes of rw=randwrite; use rw=randwrite");
    }
    if d.distribution != RandomDistribution::Uniform {
        return conflict("chooses every offset itself; drop random_distribution");
    }
    if !matches!(d.bs[IoDir::Write as usize], BsSpec::Fixed(_)) {
        return conflict("needs one block size (the drive's mapping unit); give bs=");
    }
    Ok(())
}

fn list_has(names: &[&str]) -> String {
    let verb = if names.len() == 1 { "has" } else { "have" };
    format!("{} {verb}", names.join(", "))
}
