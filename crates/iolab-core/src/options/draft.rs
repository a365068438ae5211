//! The draft: options applied one by one, in order, onto typed fields.
//!
//! Each option is parsed on its own here; how options bear on each other
//! (direct vs block sizes, rate vs rate_iops, …) is checked in `finish`.
//! Defaults are applied first through the very same [`Draft::apply`].

use std::collections::HashSet;

use super::values::{self, RwDirs};
use super::{DefaultValue, Given, OptionDef, OPTIONS};
use crate::error::JobError;
use crate::job::{
    BsSpec, CpusAllowedPolicy, IoEngine, Pattern, RandomDistribution, RateProcess, SyncMode,
};
use crate::units::{self, parse_bool, parse_size, split_per_dir};

/// Options applied so far. `None` = not given (the default is decided in `finish`).
#[derive(Debug)]
pub(super) struct Draft {
    pub kb_base: u64,
    pub name: String,
    pub filename: Option<String>,
    pub directory: Option<String>,
    pub size: Option<u64>,
    pub offset: u64,
    pub pattern: Pattern,
    pub dirs: RwDirs,
    pub read_pct: u32,
    /// The last explicit rwmixread/rwmixwrite: (canonical name, `rwmixread=70` as written).
    pub rwmix_written: Option<(&'static str, String)>,
    pub bs: [BsSpec; 2],
    pub blockalign: [Option<u64>; 2],
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
    pub ioengine: IoEngine,
    pub uri: Option<String>,
    pub nbd_connections: u32,
    pub rate: [u64; 2],
    pub rate_iops: [u64; 2],
    pub rate_process: RateProcess,
    pub thinktime_ns: u64,
    pub cpus_allowed: Option<Vec<usize>>,
    pub cpus_policy: CpusAllowedPolicy,
    pub randseed: Option<u64>,
    pub randrepeat: bool,
    pub norandommap: bool,
    pub distribution: RandomDistribution,
    pub percentiles: Vec<f64>,
    pub group_reporting: bool,
    pub stonewall: bool,
    /// Canonical names of the options the user gave (not defaults).
    pub explicit: HashSet<&'static str>,
    pub warnings: Vec<String>,
}

impl Draft {
    /// A draft holding every table default.
    pub fn with_defaults(name: &str, kb_base: u64) -> Result<Draft, JobError> {
        let mut d = Draft::empty(name, kb_base);
        for def in OPTIONS {
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
            read_pct: 50,
            rwmix_written: None,
            bs: [BsSpec::Fixed(4096), BsSpec::Fixed(4096)],
            blockalign: [None, None],
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
            ioengine: IoEngine::Psync,
            uri: None,
            nbd_connections: 1,
            rate: [0, 0],
            rate_iops: [0, 0],
            rate_process: RateProcess::Linear,
            thinktime_ns: 0,
            cpus_allowed: None,
            cpus_policy: CpusAllowedPolicy::Shared,
            randseed: None,
            randrepeat: true,
            norandommap: false,
            distribution: RandomDistribution::Uniform,
            percentiles: Vec::new(),
            group_reporting: false,
            stonewall: false,
            explicit: HashSet::new(),
            warnings: Vec::new(),
        }
    }

    /// Applies one option; `explicit` is false for table defaults.
    pub fn apply(&mut self, g: &Given<'_>, explicit: bool) -> Result<(), JobError> {
        let v = Val {
            g,
            kb_base: self.kb_base,
            explicit,
        };
        self.apply_value(g.def, &v)?;
        if explicit {
            self.explicit.insert(g.def.name);
        }
        Ok(())
    }

    fn apply_value(&mut self, def: &OptionDef, v: &Val<'_>) -> Result<(), JobError> {
        match def.name {
            "name" => self.name = v.nonempty_text()?.to_string(),
            "description" => {} // kept in the spec, which the prepared job carries
            // Resolved before everything else (see `kb_base_of`); checked here
            // too, so an overridden bad value is still reported.
            "kb_base" if !matches!(v.text(), "1000" | "1024") => {
                return Err(v.invalid("must be 1000 or 1024"))
            }
            "kb_base" => {}
            "filename" => self.filename = Some(v.nonempty_text()?.to_string()),
            "directory" => self.directory = Some(v.nonempty_text()?.to_string()),
            "size" => self.size = Some(v.positive(v.size_no_pct()?)?),
            "offset" => self.offset = v.size_no_pct()?,
            "rw" => (self.pattern, self.dirs) = v.wrap(values::parse_rw(v.text()))?,
            "rwmixread" | "rwmixwrite" => self.apply_rwmix(def.name, v)?,
            "bs" => v.per_dir(&mut self.bs, |t, kb| {
                Ok(BsSpec::Fixed(positive_size(t, kb)?))
            })?,
            "bsrange" => v.per_dir(&mut self.bs, parse_bs_range)?,
            "bssplit" => v.per_dir(&mut self.bs, |t, kb| {
                units::parse_bssplit(t, kb).map(BsSpec::Split)
            })?,
            "blockalign" => v.per_dir(&mut self.blockalign, |t, kb| {
                Ok(Some(positive_size(t, kb)?))
            })?,
            "iodepth" => self.iodepth = v.u32_min(1)?,
            "iodepth_batch_submit" => self.batch_submit = v.u32_min(0)?,
            "iodepth_batch_complete_min" => self.batch_complete_min = v.u32_min(0)?,
            "iodepth_batch_complete_max" => self.batch_complete_max = Some(v.u32_min(1)?),
            "numjobs" => self.numjobs = v.u32_min(1)?,
            "loops" => self.loops = v.u32_min(1)?,
            "fsync" => self.fsync = v.u32_min(0)?,
            "fdatasync" => self.fdatasync = v.u32_min(0)?,
            _ => return self.apply_more(def, v),
        }
        Ok(())
    }

    fn apply_more(&mut self, def: &OptionDef, v: &Val<'_>) -> Result<(), JobError> {
        match def.name {
            "runtime" => self.runtime_ns = v.time()?,
            "time_based" => self.time_based = v.flag()?,
            "ramp_time" => self.ramp_time_ns = v.time()?,
            "startdelay" => self.startdelay_ns = v.time_no_range()?,
            "direct" => self.direct = v.flag()?,
            "buffered" => self.direct = !v.flag()?,
            "sync" => self.sync = v.wrap(values::parse_sync(v.text()))?,
            "dsync" => self.apply_dsync(v.flag()?),
            "end_fsync" => self.end_fsync = v.flag()?,
            "ioengine" => self.ioengine = v.wrap(values::parse_ioengine(v.text()))?,
            "uri" => self.uri = Some(v.nonempty_text()?.to_string()),
            "nbd_connections" => self.nbd_connections = v.u32_min(1)?,
            "rate" => v.per_dir(&mut self.rate, parse_size)?,
            "rate_iops" => v.per_dir(&mut self.rate_iops, parse_size)?,
            "rate_process" => self.rate_process = v.rate_process()?,
            "thinktime" => self.thinktime_ns = v.time()?,
            "cpus_allowed" => self.cpus_allowed = Some(v.wrap(units::parse_cpu_list(v.text()))?),
            "cpus_allowed_policy" => self.cpus_policy = v.cpus_policy()?,
            "randseed" => self.randseed = Some(v.wrap(units::parse_uint(v.text()))?),
            "randrepeat" => self.randrepeat = v.flag()?,
            "norandommap" => self.norandommap = v.flag()?,
            "random_distribution" => {
                self.distribution = v.wrap(values::parse_distribution(v.text()))?
            }
            "percentile_list" => {
                self.percentiles = v.wrap(units::parse_percentile_list(v.text()))?
            }
            "group_reporting" => self.group_reporting = v.flag()?,
            "stonewall" => self.stonewall = v.flag()?,
            other => unreachable!("option '{other}' is in the table but has no handler"),
        }
        Ok(())
    }

    /// rwmixread and rwmixwrite set the same share; the later one wins (fio's
    /// documented rule). Overriding an inconsistent earlier one is reported.
    fn apply_rwmix(&mut self, which: &'static str, v: &Val<'_>) -> Result<(), JobError> {
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

    fn apply_dsync(&mut self, on: bool) {
        if on {
            self.sync = SyncMode::Dsync;
        } else if self.sync == SyncMode::Dsync {
            self.sync = SyncMode::None;
        }
    }
}

fn positive_size(text: &str, kb_base: u64) -> Result<u64, String> {
    match parse_size(text, kb_base)? {
        0 => Err("must be greater than 0".into()),
        n => Ok(n),
    }
}

fn parse_bs_range(text: &str, kb_base: u64) -> Result<BsSpec, String> {
    let (min, max) = units::parse_size_range(text, kb_base)?;
    if min == 0 {
        return Err("the smallest block size must be greater than 0".into());
    }
    Ok(if min == max {
        BsSpec::Fixed(min)
    } else {
        BsSpec::Range { min, max }
    })
}

/// One option's value with the helpers that turn parse failures into
/// [`JobError`]s naming the option as written.
struct Val<'a> {
    g: &'a Given<'a>,
    kb_base: u64,
    /// False while table defaults are applied.
    explicit: bool,
}

impl Val<'_> {
    fn text(&self) -> &str {
        self.g.value.unwrap_or_default().trim()
    }

    fn invalid(&self, reason: impl Into<String>) -> JobError {
        JobError::InvalidValue {
            option: self.g.written.to_string(),
            value: self.g.value.unwrap_or_default().to_string(),
            reason: reason.into(),
        }
    }

    fn wrap<T>(&self, r: Result<T, String>) -> Result<T, JobError> {
        r.map_err(|e| self.invalid(e))
    }

    fn nonempty_text(&self) -> Result<&str, JobError> {
        match self.text() {
            "" => Err(self.invalid("must not be empty")),
            t => Ok(t),
        }
    }

    fn flag(&self) -> Result<bool, JobError> {
        self.wrap(parse_bool(self.g.value))
    }

    fn positive(&self, n: u64) -> Result<u64, JobError> {
        if n == 0 {
            return Err(self.invalid("must be greater than 0"));
        }
        Ok(n)
    }

    fn size_no_pct(&self) -> Result<u64, JobError> {
        if self.text().ends_with('%') {
            return Err(self.invalid(
                "percentages of the file size are not supported yet; give a size like 10g",
            ));
        }
        self.wrap(parse_size(self.text(), self.kb_base))
    }

    fn u32_min(&self, min: u32) -> Result<u32, JobError> {
        let n = self.wrap(units::parse_uint(self.text()))?;
        let n = u32::try_from(n).map_err(|_| self.invalid("too large"))?;
        if n < min {
            return Err(self.invalid(format!("must be at least {min}")));
        }
        Ok(n)
    }

    fn time(&self) -> Result<u64, JobError> {
        let super::OptionKind::Time { default_unit_ns } = self.g.def.kind else {
            unreachable!("time() on option '{}' which is not a time", self.g.def.name)
        };
        self.wrap(units::parse_time_ns(self.text(), default_unit_ns))
    }

    fn time_no_range(&self) -> Result<u64, JobError> {
        if self.text().contains(['-', ':']) {
            return Err(self.invalid("ranges (random start delays) are not supported yet"));
        }
        self.time()
    }

    fn rate_process(&self) -> Result<RateProcess, JobError> {
        match self.text() {
            "linear" => Ok(RateProcess::Linear),
            "poisson" => Ok(RateProcess::Poisson),
            _ => Err(self.invalid("expected linear or poisson")),
        }
    }

    fn cpus_policy(&self) -> Result<CpusAllowedPolicy, JobError> {
        match self.text() {
            "shared" => Ok(CpusAllowedPolicy::Shared),
            "split" => Ok(CpusAllowedPolicy::Split),
            _ => Err(self.invalid("expected shared or split")),
        }
    }

    /// Applies a `read,write` value: each given direction is parsed and
    /// stored; an empty one keeps what was there (fio's rule).
    fn per_dir<T>(
        &self,
        slots: &mut [T; 2],
        parse: impl Fn(&str, u64) -> Result<T, String>,
    ) -> Result<(), JobError> {
        let parts = self.wrap(split_per_dir(self.text()))?;
        for (slot, part) in slots.iter_mut().zip(parts) {
            if let Some(text) = part {
                *slot = self.wrap(parse(text, self.kb_base))?;
            }
        }
        Ok(())
    }
}
