//! Option rows for I/O priorities (fio's prio, prioclass, priohint and the
//! cmdprio options of io_uring and libaio), numa_mem_policy, cpuio's
//! cpumode and the per-I/O record directory; [`check`] refuses the
//! combinations fio refuses. Part of the one option table (see `table`).

use super::draft::Draft;
use super::val::put;
use super::DefaultValue::{Note, Value};
use super::OptionDef;
use super::OptionKind::*;
use crate::error::JobError;
use crate::job::prio::{parse_class, parse_cmdprio_bssplit, parse_hint, parse_level, parse_nice};
use crate::job::{CpuMode, IoEngine, MemPolicy};

pub(super) static PRIO_OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "realtime",
        set: |d, v| put(&mut d.prio.realtime, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "iolab's own (fio has none): the job's worker threads run under SCHED_FIFO \
               (priority 1, the lowest real-time one) with 1 ns of timer slack, so ordinary \
               threads of a busy machine cannot keep a worker from its completions — for \
               latency figures that must hold beside other work, with `iolab target \
               --realtime` on the other side. Needs CAP_SYS_NICE or ulimit -r >= 1: a run \
               the host refuses it to stops before any I/O, saying so. A worker that never \
               blocks (the null engine, spinning) would hold its CPU: Linux keeps 5 % of \
               each CPU for other threads.",
    },
    OptionDef {
        name: "nice",
        set: |d, v| put(&mut d.prio.nice, v.wrap(parse_nice(v.text()))),
        aliases: &[],
        kind: Int,
        default: Value("0"),
        unit: "",
        help: "Run each worker thread this much nicer, as fio's nice(2): added to the nice \
               value iolab runs with (-20 to 19; lowering it needs CAP_SYS_NICE or \
               ulimit -e, and a run the host refuses stops before any I/O, saying so).",
    },
    OptionDef {
        name: "prio",
        set: |d, v| put(&mut d.prio.prio, v.wrap(parse_level(v.text())).map(Some)),
        aliases: &[],
        kind: Int,
        default: Note("the thread's own (none set)"),
        unit: "",
        help: "I/O priority level of the job, 0 (highest) to 7 (see ionice(1)): set on each \
               worker thread with ioprio_set, and on every io_uring request (as fio).",
    },
    OptionDef {
        name: "prioclass",
        set: |d, v| {
            put(
                &mut d.prio.prioclass,
                v.wrap(parse_class(v.text())).map(Some),
            )
        },
        aliases: &[],
        kind: Int,
        default: Note("best effort when prio is given"),
        unit: "",
        help: "I/O priority class of the job: 1 realtime (needs CAP_SYS_ADMIN), 2 best \
               effort, 3 idle; set as prio is.",
    },
    OptionDef {
        name: "priohint",
        set: |d, v| put(&mut d.prio.priohint, v.wrap(parse_hint(v.text())).map(Some)),
        aliases: &[],
        kind: Int,
        default: Note("0 (no hint)"),
        unit: "",
        help: "I/O priority hint of the job (0-1023, e.g. a command duration limit \
               descriptor); set as prio is.",
    },
    OptionDef {
        name: "cmdprio_percentage",
        set: |d, v| {
            v.per_dir(&mut d.prio.cmdprio_percentage, |t, _| {
                match t.parse::<u32>() {
                    Ok(p) if p <= 100 => Ok(p),
                    _ => Err(format!("'{t}' must be a percentage from 0 to 100")),
                }
            })
        },
        aliases: &[],
        kind: Int,
        default: Value("0"),
        unit: "%",
        help: "io_uring, libaio: percent of the I/Os (read,write) issued with the cmdprio \
               priority (cmdprio_class, cmdprio, cmdprio_hint); the rest get the job's \
               priority. Latency is then also reported per priority (json 'prios').",
    },
    OptionDef {
        name: "cmdprio_class",
        set: |d, v| v.per_dir(&mut d.prio.cmdprio_class, |t, _| parse_class(t)),
        aliases: &[],
        kind: Int,
        default: Value("1"),
        unit: "",
        help: "io_uring, libaio: priority class (read,write) of the cmdprio I/Os; 1 \
               (realtime) by default, as in fio.",
    },
    OptionDef {
        name: "cmdprio",
        set: |d, v| v.per_dir(&mut d.prio.cmdprio, |t, _| parse_level(t)),
        aliases: &[],
        kind: Int,
        default: Value("0"),
        unit: "",
        help: "io_uring, libaio: priority level (read,write) of the cmdprio I/Os, 0-7.",
    },
    OptionDef {
        name: "cmdprio_hint",
        set: |d, v| v.per_dir(&mut d.prio.cmdprio_hint, |t, _| parse_hint(t)),
        aliases: &[],
        kind: Int,
        default: Value("0"),
        unit: "",
        help: "io_uring, libaio: priority hint (read,write) of the cmdprio I/Os, 0-1023.",
    },
    OptionDef {
        name: "cmdprio_bssplit",
        set: |d, v| v.per_dir(&mut d.prio.cmdprio_bssplit, parse_cmdprio_bssplit),
        aliases: &[],
        kind: Text,
        default: Note("none"),
        unit: "",
        help: "io_uring, libaio: per block size, the percent of I/Os issued with a \
               priority: bs/perc (cmdprio_class/cmdprio/cmdprio_hint), bs/perc/class/level \
               or bs/perc/class/level/hint, entries joined by ':', read,write. Not with \
               cmdprio_percentage.",
    },
    OptionDef {
        name: "numa_mem_policy",
        set: |d, v| {
            put(
                &mut d.worker.numa_mem_policy,
                v.wrap(MemPolicy::parse(v.text())),
            )
        },
        aliases: &[],
        kind: Text,
        default: Note("the process's policy"),
        unit: "",
        help: "NUMA memory policy of each worker thread (set_mempolicy before it starts; \
               its I/O buffers are moved under the policy with mbind): default, local, \
               prefer:N, bind:NODES or interleave:NODES (NODES as '0-1,3' or all). A node \
               the host lacks is an error.",
    },
    OptionDef {
        name: "cpumode",
        set: |d, v| {
            let mode = match v.text() {
                "noop" => Ok(CpuMode::Noop),
                "qsort" => Ok(CpuMode::Qsort),
                _ => Err(v.invalid("expected noop or qsort")),
            };
            put(&mut d.worker.cpumode, mode)
        },
        aliases: &[],
        kind: Choice(&["noop", "qsort"]),
        default: Value("noop"),
        unit: "",
        help: "cpuio: how the busy part burns CPU: noop (an arithmetic loop) or qsort \
               (sorts freshly drawn random numbers, as fio's, which draws more power).",
    },
    OptionDef {
        name: "per_io_log",
        set: |d, v| {
            put(
                &mut d.worker.per_io_log,
                v.some_text().map(|t| t.map(Into::into)),
            )
        },
        aliases: &[],
        kind: Text,
        default: Note("none"),
        unit: "",
        help: "Directory where each worker streams one binary record per completed I/O \
               (JOB.WORKER.iolog); `iolab run` sets it for fio's per-I/O logs \
               (log_avg_msec=0) and turns the records into fio's log format.",
    },
    OptionDef {
        name: "create_only",
        set: |d, v| put(&mut d.worker.create_only, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "Only set the job up: create or extend its files as the job would (the layout \
               notes say what was done) and do no I/O; the job's result says so, not a table \
               of zeros.",
    },
    OptionDef {
        name: "lockmem",
        set: |d, v| put(&mut d.worker.lockmem_bytes, v.size()),
        aliases: &[],
        kind: Size,
        default: Value("0"),
        unit: "bytes",
        help: "Lock this much memory (mlock) in each worker while it runs (from its group's \
               start to its end), as fio does, to test as if the machine had that much less \
               (numjobs workers lock numjobs times it). Refused before any I/O where RLIMIT_MEMLOCK is lower and \
               the process may not lock more (ulimit -l).",
    },
];

/// fio's rules: per-command priorities belong to io_uring and libaio;
/// bssplit and percentage exclude each other; cpumode is cpuio's (a
/// warning, as for cpuload).
pub(super) fn check(d: &mut Draft) -> Result<(), JobError> {
    let caps = d.ioengine.caps();
    if d.prio.per_command() && !caps.per_io_prio {
        return Err(JobError::Conflict(format!(
            "cmdprio_percentage/cmdprio_bssplit set a priority per I/O, which only \
             ioengine={} do (as in fio); with ioengine={} use \
             prio/prioclass for the whole job",
            IoEngine::names_that(|c| c.per_io_prio).join(" and "),
            d.ioengine.name()
        )));
    }
    if d.explicit.contains("cmdprio_percentage") && d.explicit.contains("cmdprio_bssplit") {
        return Err(JobError::Conflict(
            "cmdprio_percentage and cmdprio_bssplit exclude each other (as in fio): give one"
                .into(),
        ));
    }
    if d.explicit.contains("cpumode") && caps.target != crate::engines::Target::NoIo {
        d.warnings.push(format!(
            "cpumode has no effect with ioengine={} (it is cpuio's)",
            d.ioengine.name()
        ));
    }
    Ok(())
}
