//! The draft: options applied one by one, in order, onto typed fields.
//!
//! Each option is parsed on its own by its table row's setter (see
//! `table`, and `val` for the parse helpers); how options bear on each other
//! (direct vs block sizes, rate vs rate_iops, …) is checked in `finish`.
//! Defaults are applied first through the very same [`Draft::apply`].

use std::collections::HashSet;

use super::val::Val;
use super::values::{self, RwDirs};
use super::{DefaultValue, Given, OPTIONS};
use crate::error::JobError;
use crate::job::{
    Amounts, BsSpec, CpusAllowedPolicy, DataOptions, EngineOptions, ErrorOptions, FileOptions,
    IoEngine, Pattern, RandomDistribution, RateProcess, SyncMode, ZoneOptions,
};

/// Options applied so far. `None` = not given (the default is decided in `finish`).
#[derive(Debug)]
pub(crate) struct Draft {
    pub kb_base: u64,
    pub name: String,
    pub filename: Option<String>,
    pub directory: Option<String>,
    pub size: Option<u64>,
    pub offset: u64,
    pub pattern: Pattern,
    pub dirs: RwDirs,
    /// `rw=read:17m`: bytes added after each sequential I/O (negative: back).
    pub rw_seq_add: i64,
    pub read_pct: u32,
    /// The last explicit rwmixread/rwmixwrite: (canonical name, `rwmixread=70` as written).
    pub rwmix_written: Option<(&'static str, String)>,
    pub bs: [BsSpec; 2],
    pub blockalign: [Option<u64>; 2],
    /// `percentage_random`: share (%) of a random job's I/Os, per direction,
    /// whose offset is random; the rest follow the last one.
    pub percentage_random: [u32; 2],
    pub iodepth: u32,
    pub batch_submit: u32,
    pub batch_complete_min: u32,
    pub batch_complete_max: Option<u32>,
    pub numjobs: u32,
    pub runtime_ns: u64,
    pub time_based: bool,
    pub ramp_time_ns: u64,
    pub startdelay_ns: u64,
    pub loops: u32,
    pub direct: bool,
    pub sync: SyncMode,
    pub fsync: u32,
    pub fdatasync: u32,
    pub end_fsync: bool,
    /// `fsync_on_close`: iolab closes a job's files once, at its end.
    pub fsync_on_close: bool,
    pub ioengine: IoEngine,
    pub uri: Option<String>,
    pub nbd_connections: u32,
    pub engine: EngineOptions,
    pub data: DataOptions,
    pub amounts: Amounts,
    pub prio: crate::job::PrioOptions,
    pub worker: crate::job::WorkerOptions,
    pub replay: crate::job::ReplayOptions,
    pub files: FileOptions,
    pub zones: ZoneOptions,
    /// `size=8z`, `offset=524z`: counts of zones, resolved in `finish`.
    pub zones_given: super::zones::ZoneCounts,
    pub errors: ErrorOptions,
    pub offset_increment: u64,
    pub control: crate::job::IoControl,
    pub rate: [u64; 2],
    pub rate_iops: [u64; 2],
    pub rate_process: RateProcess,
    pub thinktime_ns: u64,
    pub think: crate::job::ThinkOptions,
    pub cpus_allowed: Option<Vec<usize>>,
    pub cpus_policy: CpusAllowedPolicy,
    pub randseed: Option<u64>,
    pub randrepeat: bool,
    /// `allrandrepeat`: iolab's generators all follow one seed, so this
    /// asks for what randrepeat=1 does.
    pub allrandrepeat: bool,
    pub norandommap: bool,
    pub distribution: RandomDistribution,
    /// `random_sequence_stride`, folded into a `sequence:` distribution in `finish`.
    pub random_sequence_stride: bool,
    pub percentiles: Vec<f64>,
    pub group_reporting: bool,
    pub unified_rw_reporting: crate::job::UnifiedRw,
    pub stonewall: bool,
    /// Canonical names of the options the user gave (not defaults).
    pub explicit: HashSet<&'static str>,
    pub warnings: Vec<String>,
    /// Third (trim) values of per-direction options, checked once `rw=`
    /// is known (options/trims.rs).
    pub trim_values: Vec<super::trims::TrimValue>,
}

impl Draft {
    /// A draft holding every table default.
    pub fn with_defaults(name: &str, kb_base: u64) -> Result<Draft, JobError> {
        let mut d = Draft::empty(name, kb_base);
        for def in OPTIONS.iter() {
            if let DefaultValue::Value(v) = def.default {
                d.apply(
                    &Given {
                        def,
                        written: def.name,
                        value: Some(v),
                    },
                    false,
                )?;
            }
        }
        Ok(d)
    }

    /// Neutral values, all overwritten by table defaults or decided in `finish`.
    fn empty(name: &str, kb_base: u64) -> Draft {
        Draft {
            kb_base,
            name: name.to_string(),
            filename: None,
            directory: None,
            size: None,
            offset: 0,
            pattern: Pattern::Sequential,
            dirs: RwDirs::Read,
            rw_seq_add: 0,
            read_pct: 50,
            rwmix_written: None,
            bs: [BsSpec::Fixed(4096), BsSpec::Fixed(4096)],
            blockalign: [None, None],
            percentage_random: [100, 100],
            iodepth: 1,
            batch_submit: 1,
            batch_complete_min: 1,
            batch_complete_max: None,
            numjobs: 1,
            runtime_ns: 0,
            time_based: false,
            ramp_time_ns: 0,
            startdelay_ns: 0,
            loops: 1,
            direct: false,
            sync: SyncMode::None,
            fsync: 0,
            fdatasync: 0,
            end_fsync: false,
            fsync_on_close: false,
            ioengine: IoEngine::Psync,
            uri: None,
            nbd_connections: 1,
            engine: EngineOptions::default(),
            data: DataOptions::default(),
            amounts: Amounts::default(),
            errors: ErrorOptions::default(),
            offset_increment: 0,
            prio: Default::default(),
            worker: Default::default(),
            replay: Default::default(),
            files: FileOptions::default(),
            zones: ZoneOptions::default(),
            zones_given: Default::default(),
            control: crate::job::IoControl::default(),
            rate: [0, 0],
            rate_iops: [0, 0],
            rate_process: RateProcess::Linear,
            thinktime_ns: 0,
            think: Default::default(),
            cpus_allowed: None,
            cpus_policy: CpusAllowedPolicy::Shared,
            randseed: None,
            randrepeat: true,
            allrandrepeat: false,
            norandommap: false,
            distribution: RandomDistribution::Uniform,
            random_sequence_stride: false,
            percentiles: Vec::new(),
            group_reporting: false,
            unified_rw_reporting: Default::default(),
            stonewall: false,
            explicit: HashSet::new(),
            warnings: Vec::new(),
            trim_values: Vec::new(),
        }
    }

    /// Applies one option through its row's setter; `explicit` is false
    /// for table defaults.
    pub fn apply(&mut self, g: &Given<'_>, explicit: bool) -> Result<(), JobError> {
        let v = Val {
            g,
            kb_base: self.kb_base,
            explicit,
            trim_given: std::cell::Cell::new(None),
        };
        (g.def.set)(self, &v)?;
        if let Some((write, trim)) = v.trim_given.take() {
            self.trim_values.push(super::trims::TrimValue {
                written: g.written.to_string(),
                write: write.map(str::to_string),
                trim: trim.to_string(),
            });
        }
        if explicit {
            self.explicit.insert(g.def.name);
        }
        Ok(())
    }

    /// iolab's workers are always threads: `thread=1` changes nothing, and
    /// `thread=0` (fio's processes) is said to run as threads anyway.
    pub fn apply_thread(&mut self, threads: bool) -> Result<(), JobError> {
        if !threads {
            self.warnings.push(
                "thread=0 (one process per worker) is not offered: iolab runs workers as threads"
                    .into(),
            );
        }
        Ok(())
    }

    /// `rw=` sets two fields (pattern and directions).
    pub fn apply_rw(&mut self, v: &Val<'_>) -> Result<(), JobError> {
        (self.pattern, self.dirs, self.rw_seq_add) =
            v.wrap(values::parse_rw(v.text(), self.kb_base))?;
        Ok(())
    }

    /// rwmixread and rwmixwrite set the same share; the later one wins (fio's
    /// documented rule). Overriding an inconsistent earlier one is reported.
    pub fn apply_rwmix(&mut self, which: &'static str, v: &Val<'_>) -> Result<(), JobError> {
        let pct = v.u32_min(0)?;
        if pct > 100 {
            return Err(v.invalid("must be a percentage from 0 to 100"));
        }
        let read_pct = if which == "rwmixread" { pct } else { 100 - pct };
        if v.explicit {
            let written = format!("{}={}", v.g.written, v.text());
            if let Some((prev_option, prev)) = &self.rwmix_written {
                if *prev_option != which && read_pct != self.read_pct {
                    self.warnings.push(format!(
                        "{written} overrides the earlier {prev}: {read_pct}% reads, {}% writes",
                        100 - read_pct
                    ));
                }
            }
            self.rwmix_written = Some((which, written));
        }
        self.read_pct = read_pct;
        Ok(())
    }

    pub fn apply_dsync(&mut self, on: bool) -> Result<(), JobError> {
        if on {
            self.sync = SyncMode::Dsync;
        } else if self.sync == SyncMode::Dsync {
            self.sync = SyncMode::None;
        }
        Ok(())
    }
}
