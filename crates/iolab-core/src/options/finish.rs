//! From a draft to a [`PreparedJob`]: the checks that involve more than one
//! option, the values fio derives from others (blockalign, batch sizes,
//! the seed), and warnings for settings that have no effect.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::path::PathBuf;

use super::draft::Draft;
use super::values::{self, RwDirs};
use super::DEFAULT_RANDSEED;
use crate::engines::Target;
use crate::error::JobError;
use crate::job::{
    CpusAllowedPolicy, IoDir, IoEngine, JobSpec, Pattern, PreparedJob, RandomDistribution, RwMix,
    SyncMode, TrimMode,
};

/// Queue settings after fio's adjustments.
struct Depth {
    iodepth: u32,
    submit: u32,
    complete_min: u32,
    complete_max: u32,
}

pub(super) fn finish(mut d: Draft, spec: &JobSpec) -> Result<PreparedJob, JobError> {
    time_based_without_runtime(&mut d);
    super::table_replay::apply_log(&mut d)?;
    let nbd = super::nbd::target(&d)?;
    let (mut filenames, directory) = files(&d)?;
    let shared_files = d.filename.is_some();
    let rw = rw_mix(&mut d);
    super::zones::resolve_counts(&mut d)?;
    super::files::resolve(&mut d, rw, &mut filenames)?;
    check_size(&d, rw, filenames.len().max(d.files.nrfiles as usize).max(1))?;
    super::amounts::amounts(&mut d)?;
    let blockalign = blockalign(&mut d, rw);
    let percentage_random = percentage_random(&mut d, rw);
    super::table_errors::check(&mut d, rw)?;
    super::table_uring::check(&mut d)?;
    let depth = queueing(&mut d)?;
    check_time_and_cpus(&d)?;
    pre_read(&mut d)?;
    super::amounts::cpuio(&mut d)?;
    super::table_prio::check(&mut d)?;
    let (rate_bytes_per_s, rate_iops) = rates(&d)?;
    let randseed = seed(&d);
    super::data::check(&mut d, rw)?;
    super::zones::check(&mut d, rw, filenames.len())?;
    super::table_control::check(&mut d)?;
    think(&mut d);
    super::data_shape::check(&mut d, rw)?;
    super::trims::check(&mut d, rw)?;
    note_no_effect(&mut d, rw);
    d.warnings.dedup();
    Ok(PreparedJob {
        name: d.name,
        filenames,
        shared_files,
        directory,
        size: d.size,
        offset: d.offset,
        rw,
        rw_seq_add_bytes: d.rw_seq_add,
        bs: d.bs,
        blockalign,
        percentage_random,
        iodepth: depth.iodepth,
        iodepth_batch_submit: depth.submit,
        iodepth_batch_complete_min: depth.complete_min,
        iodepth_batch_complete_max: depth.complete_max,
        numjobs: d.numjobs,
        runtime_ns: (d.runtime_ns > 0).then_some(d.runtime_ns),
        time_based: d.time_based,
        ramp_time_ns: d.ramp_time_ns,
        startdelay_ns: d.startdelay_ns,
        loops: d.loops,
        direct: d.direct,
        sync: d.sync,
        fsync: d.fsync,
        fdatasync: d.fdatasync,
        end_fsync: d.end_fsync || d.fsync_on_close,
        ioengine: d.ioengine,
        nbd,
        engine: d.engine,
        data: d.data,
        amounts: d.amounts,
        prio: d.prio,
        worker: d.worker,
        replay: d.replay,
        files: d.files,
        zones: d.zones,
        errors: d.errors,
        offset_increment: d.offset_increment,
        control: d.control,
        rate_bytes_per_s,
        rate_iops,
        rate_process: d.rate_process,
        thinktime_ns: d.thinktime_ns,
        think: d.think,
        cpus_allowed: d.cpus_allowed,
        cpus_allowed_policy: d.cpus_policy,
        randseed,
        randrepeat: d.randrepeat || d.allrandrepeat || d.explicit.contains("randseed"),
        randseed_given: d.explicit.contains("randseed"),
        first_worker: 0,
        seed_host: 0,
        norandommap: d.norandommap,
        random_distribution: d.distribution,
        percentile_list: d.percentiles,
        group_reporting: d.group_reporting,
        unified_rw_reporting: d.unified_rw_reporting,
        stonewall: d.stonewall,
        warnings: d.warnings,
        spec: spec.clone(),
    })
}

fn invalid(option: &str, value: &str, reason: String) -> JobError {
    JobError::InvalidValue {
        option: option.into(),
        value: value.into(),
        reason,
    }
}

fn files(d: &Draft) -> Result<(Vec<PathBuf>, Option<PathBuf>), JobError> {
    let directory = match &d.directory {
        Some(text) => {
            Some(values::parse_directory(text).map_err(|e| invalid("directory", text, e))?)
        }
        None => None,
    };
    if d.name.trim().is_empty() {
        return Err(JobError::BadForm {
            option: "name".into(),
            reason: "must not be empty".into(),
        });
    }
    let Some(text) = &d.filename else {
        // Files will be called name.N.0, so the name must be one path component.
        if d.name.contains('/') {
            return Err(invalid(
                "name",
                &d.name,
                "names the generated files (name.N.0) and \
                must not contain '/'; give filename= or directory= instead"
                    .into(),
            ));
        }
        return Ok((Vec::new(), directory));
    };
    let names = values::parse_filenames(text, directory.as_ref())
        .map_err(|e| invalid("filename", text, e))?;
    Ok((names, directory))
}

fn rw_mix(d: &mut Draft) -> RwMix {
    let read_pct = match d.dirs {
        RwDirs::Read => 100,
        RwDirs::Write | RwDirs::Trim | RwDirs::TrimWrite => 0,
        RwDirs::Mixed => d.read_pct,
    };
    let trim = match d.dirs {
        RwDirs::Trim => TrimMode::Only,
        RwDirs::TrimWrite => TrimMode::ThenWrite,
        _ => TrimMode::None,
    };
    if d.dirs != RwDirs::Mixed {
        if let Some((_, written)) = &d.rwmix_written {
            d.warnings.push(format!(
                "{written} has no effect: rw is not a mix (use rw, readwrite or randrw)"
            ));
        }
    }
    RwMix {
        pattern: d.pattern,
        read_pct,
        trim,
    }
}

/// The directions the job does, for checks that only concern those.
fn done_dirs(rw: RwMix) -> impl Iterator<Item = IoDir> {
    IoDir::ALL.into_iter().filter(move |dir| rw.uses_slot(*dir))
}

fn check_size(d: &Draft, rw: RwMix, nfiles: usize) -> Result<(), JobError> {
    let Some(size) = d.size else {
        // nbd: the export's size, learnt when the engine connects; cpuio
        // does no I/O.
        let sized_elsewhere = matches!(d.ioengine.caps().target, Target::NbdExport | Target::NoIo);
        if d.filename.is_none() && !sized_elsewhere {
            return Err(JobError::BadForm {
                option: "size".into(),
                reason: "is required when iolab creates the files (no filename given); give \
                         size=, or filename= of an existing file or device"
                    .into(),
            });
        }
        return Ok(());
    };
    let per_file = size / nfiles as u64;
    let largest = done_dirs(rw)
        .map(|dir| d.bs[dir as usize].max())
        .max()
        .unwrap_or(0);
    if per_file < largest {
        return Err(JobError::Conflict(format!(
            "size={size} gives {per_file} bytes per file, less than the largest block size \
             ({largest} bytes)"
        )));
    }
    Ok(())
}

/// `percentage_random` applies to random I/O only (fio's rule); on a
/// sequential job every offset is sequential already, which a note says.
fn percentage_random(d: &mut Draft, rw: RwMix) -> [u32; 2] {
    if rw.pattern == Pattern::Random {
        return d.percentage_random;
    }
    if d.percentage_random != [100, 100] {
        d.warnings
            .push("percentage_random has no effect on sequential I/O".into());
    }
    [100, 100]
}

/// fio's rule: offsets of random I/O align to `blockalign` (default: the
/// smallest block size); sequential I/O always aligns to the smallest block
/// size; any other alignment turns off the random map.
fn blockalign(d: &mut Draft, rw: RwMix) -> [u64; 2] {
    let mut out = [0; 2];
    for dir in IoDir::ALL {
        let min_bs = d.bs[dir as usize].min();
        let asked = d.blockalign[dir as usize];
        let used = match rw.pattern {
            Pattern::Random => asked.unwrap_or(min_bs),
            Pattern::Sequential => min_bs,
        };
        out[dir as usize] = used;
        if !rw.uses_slot(dir) || asked.is_none_or(|a| a == min_bs) {
            continue;
        }
        if rw.pattern == Pattern::Sequential {
            d.warnings
                .push("blockalign has no effect on sequential I/O".into());
        } else if !d.norandommap {
            d.norandommap = true;
            d.warnings.push(format!(
                "blockalign={used} differs from the smallest {} block size ({min_bs}), so the \
                 random map is off (as in fio): blocks may repeat or be skipped",
                dir.name()
            ));
        }
    }
    out
}

/// fio's depth rules (fixup_options), applied here and nowhere else: the
/// engine's worker runs the prepared values as they are. A synchronous
/// engine keeps 1 I/O in flight; iodepth_batch_submit 0 means iodepth;
/// every batch is capped at iodepth; complete_max defaults to complete_min
/// (at least 1) and may not be below it.
fn queueing(d: &mut Draft) -> Result<Depth, JobError> {
    let mut iodepth = d.iodepth;
    let offload = d.control.submit_mode == crate::job::SubmitMode::Offload;
    if d.ioengine.synchronous() && iodepth > 1 && !offload {
        d.warnings.push(format!(
            "ioengine={} is synchronous: iodepth={iodepth} has no effect and each worker \
             keeps 1 I/O in flight (as fio does); use ioengine=io_uring or libaio for queue \
             depth",
            d.ioengine.name()
        ));
        iodepth = 1;
    }
    let submit = match d.batch_submit {
        0 => iodepth,
        n => n.min(iodepth),
    };
    let complete_min = d.batch_complete_min.min(iodepth);
    let complete_max = match d.batch_complete_max {
        None => complete_min.max(1),
        Some(max) if max < d.batch_complete_min => {
            return Err(JobError::Conflict(format!(
                "iodepth_batch_complete_max={max} is less than iodepth_batch_complete_min={}",
                d.batch_complete_min
            )))
        }
        Some(max) => max.min(iodepth),
    };
    Ok(Depth {
        iodepth,
        submit,
        complete_min,
        complete_max,
    })
}

/// fio 3.33 (null engine, size=4g): time_based without runtime (or
/// runtime=0) does the job's size once and ends — time_based has no
/// effect. iolab does the same rather than run until stopped, so a job
/// file that ends under fio ends here too.
fn time_based_without_runtime(d: &mut Draft) {
    if d.time_based && d.runtime_ns == 0 {
        d.time_based = false;
        d.warnings.push(
            "time_based without runtime has no effect (as in fio 3.33): the job does its size \
             once (loops times); give runtime= to keep it running for a time"
                .into(),
        );
    }
}

/// `pre_read`: what it caches, direct I/O would bypass (refused); and, as
/// in fio, it turns `invalidate` off (dropping what it read would undo it).
fn pre_read(d: &mut Draft) -> Result<(), JobError> {
    if !d.engine.pre_read {
        return Ok(());
    }
    if d.direct {
        return Err(JobError::Conflict(
            "pre_read=1 reads the files into the page cache, which direct=1 bypasses: use \
             buffered I/O (direct=0) or leave pre_read out"
                .into(),
        ));
    }
    d.engine.invalidate = false;
    Ok(())
}

fn check_time_and_cpus(d: &Draft) -> Result<(), JobError> {
    if d.cpus_policy == CpusAllowedPolicy::Split && d.cpus_allowed.is_none() {
        return Err(JobError::Conflict(
            "cpus_allowed_policy=split needs cpus_allowed (the CPUs to split), e.g. \
             cpus_allowed=0-3"
                .into(),
        ));
    }
    Ok(())
}

type PerDir = [Option<u64>; 2];

fn rates(d: &Draft) -> Result<(PerDir, PerDir), JobError> {
    let some = |v: [u64; 2]| v.map(|r| (r > 0).then_some(r));
    let (bytes, iops) = (some(d.rate), some(d.rate_iops));
    if bytes.iter().any(Option::is_some) && iops.iter().any(Option::is_some) {
        return Err(JobError::Conflict(
            "rate and rate_iops are mutually exclusive (as in fio); give one".into(),
        ));
    }
    Ok((bytes, iops))
}

/// An explicit randseed always wins (as in fio); otherwise randrepeat picks
/// the fixed default or a fresh seed. A fresh one comes from std's
/// `RandomState` (OS-seeded) mixed with the clock — no extra crate — and is
/// recorded in the prepared job, so the run can still be repeated.
fn seed(d: &Draft) -> u64 {
    match (d.randseed, d.randrepeat || d.allrandrepeat) {
        (Some(seed), _) => seed,
        (None, true) => DEFAULT_RANDSEED,
        (None, false) => {
            let mut h = RandomState::new().build_hasher();
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
            h.write_u128(now.map(|t| t.as_nanos()).unwrap_or_default());
            h.finish()
        }
    }
}

/// Non-uniform distributions never use the random map (fio's rule); settings
/// that cannot act on this job are reported rather than dropped silently.
/// A distribution on sequential I/O is reset to uniform once reported, so
/// the prepared job says what is done (the generator refuses it otherwise).
/// The `thinktime_*` options apply to `thinktime`'s stall: without one
/// they do nothing (said); a spin longer than the stall is cut to it, as
/// fio does.
fn think(d: &mut Draft) {
    const NAMES: [&str; 4] = [
        "thinktime_blocks",
        "thinktime_blocks_type",
        "thinktime_spin",
        "thinktime_iotime",
    ];
    d.think.blocks_given = d.explicit.contains("thinktime_blocks");
    if d.thinktime_ns == 0 {
        let given: Vec<&str> = NAMES
            .into_iter()
            .filter(|n| d.explicit.contains(n))
            .collect();
        if !given.is_empty() {
            d.warnings.push(format!(
                "{} {} no effect without thinktime",
                given.join(", "),
                if given.len() == 1 { "has" } else { "have" }
            ));
        }
    } else if d.think.spin_ns > d.thinktime_ns {
        d.warnings.push(format!(
            "thinktime_spin is longer than thinktime: each stall spins for thinktime ({} us)",
            d.thinktime_ns / 1000
        ));
        d.think.spin_ns = d.thinktime_ns;
    }
}

fn note_no_effect(d: &mut Draft, rw: RwMix) {
    let caps = d.ioengine.caps();
    let cpu_given = d.explicit.contains("cpuload") || d.explicit.contains("cpuchunks");
    if cpu_given && caps.target != Target::NoIo {
        d.warnings.push(format!(
            "cpuload and cpuchunks have no effect with ioengine={} (they are cpuio's)",
            d.ioengine.name()
        ));
    }
    if d.engine.hipri && !caps.hipri {
        d.warnings.push(format!(
            "hipri has no effect with ioengine={} (iolab honours it with {})",
            d.ioengine.name(),
            IoEngine::names_that(|c| c.hipri).join(", ")
        ));
    }
    match (d.direct, caps.direct_note, caps.buffered_note) {
        (true, Some(note), _) | (false, _, Some(note)) => d.warnings.push(note.into()),
        _ => {}
    }
    if caps.target != Target::NbdExport && d.explicit.contains("nbd_connections") {
        d.warnings.push(format!(
            "nbd_connections has no effect with ioengine={}",
            d.ioengine.name()
        ));
    }
    if caps.target == Target::NbdExport && d.nbd_connections > d.iodepth {
        d.warnings.push(format!(
            "nbd_connections={} is more than iodepth={}: only {} connections are opened \
             (each needs at least one request in flight)",
            d.nbd_connections, d.iodepth, d.iodepth
        ));
    }
    if d.distribution != RandomDistribution::Uniform {
        if rw.pattern == Pattern::Sequential {
            d.warnings
                .push("random_distribution has no effect on sequential I/O".into());
            d.distribution = RandomDistribution::Uniform;
        } else {
            d.norandommap = true;
        }
    }
    if rw.does(IoDir::Write) {
        return;
    }
    // Defaults of these are all "off", so a set one was given by the user.
    let write_only = [
        ("fsync", d.fsync > 0),
        ("fdatasync", d.fdatasync > 0),
        ("end_fsync", d.end_fsync),
        ("sync", d.sync != SyncMode::None),
    ];
    for (name, set) in write_only {
        if set {
            d.warnings
                .push(format!("{name} has no effect on a job that does not write"));
        }
    }
}
