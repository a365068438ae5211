//! Option rows that steer issuing beyond rate limits: fio's flow control
//! (`flow`, `flow_id`, `flow_sleep`), its latency-target search
//! (`latency_target`, `latency_window`, `latency_percentile`,
//! `latency_run`) and `io_submit_mode`. Part of the one option table (see
//! `table`); [`check`] relates them to the rest of the job.

use super::draft::Draft;
use super::val::put;
use super::DefaultValue::{Note, Value};
use super::OptionDef;
use super::OptionKind::{self, *};
use crate::error::JobError;
use crate::job::SubmitMode;
use crate::units::{self, NS_PER_US};

const MICROSECONDS: OptionKind = Time {
    default_unit_ns: NS_PER_US,
};

pub(super) static CONTROL_OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "flow",
        set: |d, v| put(&mut d.control.flow, v.u32_min(0)),
        aliases: &[],
        kind: Int,
        default: Value("0"),
        unit: "weight",
        help: "Weight in flow control: workers of jobs with the same flow_id keep their I/O \
               counts in the ratio of their weights (flow=8 beside flow=1 issues 8 I/Os for \
               each of the other's), by holding back the one ahead. 0 = not in a flow.",
    },
    OptionDef {
        name: "flow_id",
        set: |d, v| put(&mut d.control.flow_id, v.u32_min(0)),
        aliases: &[],
        kind: Int,
        default: Value("0"),
        unit: "",
        help: "Flow group of this job (jobs with the same id share one flow; 0 is the \
               global flow).",
    },
    OptionDef {
        name: "flow_sleep",
        set: |d, v| {
            put(
                &mut d.control.flow_sleep_us,
                v.wrap(units::parse_uint(v.text())),
            )
        },
        aliases: &[],
        kind: Int,
        default: Value("0"),
        unit: "us",
        help: "How long a worker held back by its flow waits (its queue drained first) \
               before trying again; 0 retries at once, reaping or yielding the CPU meanwhile.",
    },
    OptionDef {
        name: "latency_target",
        set: |d, v| put(&mut d.control.latency_target_ns, v.time()),
        aliases: &[],
        kind: MICROSECONDS,
        default: Note("off"),
        unit: "us",
        help: "Search for the highest queue depth (1 to iodepth) at which the job's total \
               latency stays within this target, as fio does: depth doubles while windows \
               succeed, then bisects; the job then runs one more window at the depth found \
               and ends (unless latency_run), reporting it as latency depth. At depth 1 \
               with latency_percentile=100, an I/O over the target ends the job with an \
               error.",
    },
    OptionDef {
        name: "latency_window",
        set: |d, v| put(&mut d.control.latency_window_ns, v.time()),
        aliases: &[],
        kind: MICROSECONDS,
        default: Note("none; required with latency_target"),
        unit: "us",
        help: "How long each queue depth of the latency_target search runs before it is judged.",
    },
    OptionDef {
        name: "latency_percentile",
        set: |d, v| {
            let p = v.wrap(units::parse_float(v.text()))?;
            if !(p > 0.0 && p <= 100.0) {
                return Err(v.invalid("must be a percentage in (0, 100]"));
            }
            put(&mut d.control.latency_percentile, Ok(p))
        },
        aliases: &[],
        kind: Text,
        default: Value("100"),
        unit: "%",
        help: "Share of a window's I/Os that must meet latency_target for the window to \
               succeed; at 100 the first I/O over the target fails the window at once.",
    },
    OptionDef {
        name: "latency_run",
        set: |d, v| put(&mut d.control.latency_run, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "1: keep adjusting the depth for the whole run instead of ending the job once \
               the latency_target search has settled.",
    },
    OptionDef {
        name: "io_submit_mode",
        set: |d, v| {
            let m = match v.text() {
                "inline" => SubmitMode::Inline,
                "offload" => SubmitMode::Offload,
                _ => return Err(v.invalid("expected inline or offload")),
            };
            put(&mut d.control.submit_mode, Ok(m))
        },
        aliases: &[],
        kind: Choice(&["inline", "offload"]),
        default: Value("inline"),
        unit: "",
        help: "inline: the worker submits and reaps its own I/O. offload: submission is \
               decoupled from completion, as with fio's pool of submitting threads: iodepth \
               submitter threads each run one I/O at a time with the job's engine, and the \
               worker hands each I/O to a free one at its rate-schedule time without \
               waiting for completions, so a rate holds while I/Os are slow (synchronous \
               engines then keep up to iodepth I/Os in flight too).",
    },
];

/// Relate the control options to the rest of the job.
pub(super) fn check(d: &mut Draft) -> Result<(), JobError> {
    let c = &d.control;
    let given = |n: &str| d.explicit.contains(n);
    if c.flow == 0 && (given("flow_id") || given("flow_sleep")) {
        d.warnings
            .push("flow_id and flow_sleep have no effect without flow (a weight)".into());
    }
    let c = &d.control;
    if c.latency_target_ns == 0 {
        if ["latency_window", "latency_percentile", "latency_run"]
            .iter()
            .any(|n| given(n))
        {
            d.warnings.push(
                "latency_window, latency_percentile and latency_run have no effect without \
                 latency_target"
                    .into(),
            );
        }
    } else if c.latency_window_ns == 0 {
        return Err(JobError::Conflict(
            "latency_target needs latency_window (how long each queue depth is tried), \
             e.g. latency_window=1s"
                .into(),
        ));
    }
    if d.control.submit_mode == SubmitMode::Offload {
        let clash = [
            ("fsync", d.fsync > 0),
            ("fdatasync", d.fdatasync > 0),
            ("end_fsync", d.end_fsync || d.fsync_on_close),
            ("thinktime", d.thinktime_ns > 0),
            ("latency_target", d.control.latency_target_ns > 0),
            ("flow", d.control.flow > 0),
            (
                "verify",
                d.data.verify != crate::job::VerifyKind::Off || d.data.verify_only,
            ),
        ];
        let engine = d.ioengine.caps().offload_refused.map(|why| match why {
            "" => format!("ioengine={}", d.ioengine.name()),
            why => format!("ioengine={} ({why})", d.ioengine.name()),
        });
        let clash = clash
            .iter()
            .find(|(_, on)| *on)
            .map(|(name, _)| name.to_string());
        if let Some(name) = clash.or(engine) {
            return Err(JobError::Conflict(format!(
                "io_submit_mode=offload with {name} is not supported: iolab's submitter \
                 threads issue reads and writes only; use io_submit_mode=inline"
            )));
        }
    }
    Ok(())
}
