//! The job option table and validation: [`JobSpec`] → [`PreparedJob`].
//!
//! [`OPTIONS`] is the single, declarative source for every option iolab
//! accepts (name, aliases, kind, default, unit, help). Validation,
//! `iolab options` and docs/options.md ([`options_markdown`])
//! are all derived from it, so they cannot drift apart. Defaults written
//! as values are applied through the same parsers as user input.
//!
//! [`prepare`] works in three steps:
//! 1. resolve every written name to its [`OptionDef`] (unknown names are
//!    errors with a "did you mean" hint, see `fio_names`),
//! 2. apply the options in order onto a draft (`draft`): later entries win,
//!    so `[global]` options written first are overridden by the job's own,
//! 3. check the options against each other and build the prepared job
//!    (`finish`), collecting warnings for settings that have no effect.
//!
//! Preparing is pure: it reads no files (whether a named file exists, and
//! how large it is, is checked when the engine lays out the files).

mod amounts;
mod data;
mod data_shape;
mod draft;
mod files;
mod finish;
mod fio_names;
pub mod nbd;
mod table;
mod table_control;
mod table_data;
mod table_data_shape;
mod table_errors;
mod table_files;
mod table_prio;
mod table_replay;
mod table_uring;
mod table_zones;
mod trims;
mod val;
mod values;
mod zones;

use crate::error::JobError;
use crate::job::{JobSpec, PreparedJob};
use crate::units::KB_BASE_DEFAULT;

/// Every option iolab knows, in documentation order: the job table, then
/// the data and verify rows (`table_data`).
pub static OPTIONS: std::sync::LazyLock<Vec<OptionDef>> = std::sync::LazyLock::new(|| {
    [
        table::JOB_OPTIONS,
        table_files::FILE_OPTIONS,
        table_data::DATA_OPTIONS,
        table_zones::ZONE_OPTIONS,
        table_errors::ERROR_OPTIONS,
        table_prio::PRIO_OPTIONS,
        table_replay::REPLAY_OPTIONS,
        table_uring::URING_OPTIONS,
        table_control::CONTROL_OPTIONS,
        table_data_shape::DATA_SHAPE_OPTIONS,
    ]
    .concat()
});

/// The seed used when `randrepeat=1` (the default) and no `randseed` is
/// given. It is fio's own constant (`FIO_RANDSEED`); iolab's generators
/// differ from fio's, so the sequences are not the same as fio's.
pub const DEFAULT_RANDSEED: u64 = 0xb189_9bed;

/// What kind of value an option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionKind {
    /// `0`/`1`/`true`/`false`; written bare it means 1.
    Bool,
    /// A whole number without units.
    Int,
    /// Bytes, with k/m/g/t/p suffixes under `kb_base`.
    Size,
    /// Bytes per direction: `read,write` (`4k,64k`; `,64k` = writes only).
    SizePerDir,
    /// A whole number per direction: `read,write` (`30,100`).
    IntPerDir,
    /// A range of bytes per direction: `4k-64k[,8k-16k]`.
    RangePerDir,
    /// Block-size shares per direction: `4k/50:64k/50[,…]`.
    SplitPerDir,
    /// A time; a bare number is in `default_unit_ns` nanoseconds.
    Time { default_unit_ns: u64 },
    /// One word of a fixed list.
    Choice(&'static [&'static str]),
    /// Free text (names, paths).
    Text,
    /// CPU indexes: `0-3,6`.
    CpuList,
    /// Percentiles: `50:90:99.9`.
    PercentileList,
    /// `random`, `zipf:θ`, `pareto:h`, `normal:dev`, `zoned:a/s:…`.
    Distribution,
}

impl OptionKind {
    /// Short name of the value's form, for help and docs.
    pub fn type_name(&self) -> &'static str {
        match self {
            OptionKind::Bool => "bool",
            OptionKind::Int => "int",
            OptionKind::Size => "size",
            OptionKind::SizePerDir => "size[,size]",
            OptionKind::IntPerDir => "int[,int]",
            OptionKind::RangePerDir => "range[,range]",
            OptionKind::SplitPerDir => "split[,split]",
            OptionKind::Time { .. } => "time",
            OptionKind::Choice(_) => "choice",
            OptionKind::Text => "text",
            OptionKind::CpuList => "cpu list",
            OptionKind::PercentileList => "float list",
            OptionKind::Distribution => "distribution",
        }
    }
}

/// An option's default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultValue {
    /// A value in the option's own syntax, applied before the user's options.
    Value(&'static str),
    /// Not a fixed value: what happens when the option is not given.
    Note(&'static str),
}

/// How a row applies its value to the draft: parse it (helpers in `val`)
/// and store it. A new option is one row with its setter, plus its field.
pub(crate) type Setter = fn(&mut draft::Draft, &val::Val<'_>) -> Result<(), JobError>;

/// One row of the option table.
#[derive(Debug, Clone, Copy)]
pub struct OptionDef {
    pub name: &'static str,
    pub(crate) set: Setter,
    pub aliases: &'static [&'static str],
    pub kind: OptionKind,
    pub default: DefaultValue,
    /// Unit of the value once parsed (`bytes`, `s`, `us`, `%`, …); empty if none.
    pub unit: &'static str,
    pub help: &'static str,
}

impl OptionDef {
    /// The values a [`OptionKind::Choice`] option accepts (empty otherwise).
    pub fn choices(&self) -> &'static [&'static str] {
        match self.kind {
            OptionKind::Choice(c) => c,
            _ => &[],
        }
    }
}

/// Finds an option by its name or one of its aliases (exact, case-sensitive as in fio).
pub fn lookup(name: &str) -> Option<&'static OptionDef> {
    OPTIONS
        .iter()
        .find(|o| o.name == name || o.aliases.contains(&name))
}

/// Validates a job into a [`PreparedJob`]. See the module doc.
pub fn prepare(spec: &JobSpec) -> Result<PreparedJob, JobError> {
    let given = resolve(spec)?;
    let kb_base = kb_base_of(&given)?;
    let mut draft = draft::Draft::with_defaults(&spec.name, kb_base)?;
    for g in &given {
        draft.apply(g, true)?;
    }
    finish::finish(draft, spec)
}

/// One option as the user wrote it, resolved to its table row.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Given<'a> {
    def: &'static OptionDef,
    /// The name as written (may be an alias), for messages.
    written: &'a str,
    value: Option<&'a str>,
}

fn resolve(spec: &JobSpec) -> Result<Vec<Given<'_>>, JobError> {
    spec.options
        .iter()
        .map(|(name, value)| {
            let written = name.trim();
            let def = lookup(written).ok_or_else(|| fio_names::unknown_option(written))?;
            if value.is_none() && def.kind != OptionKind::Bool {
                return Err(JobError::BadForm {
                    option: written.to_string(),
                    reason: format!("needs a value ({written}=VALUE)"),
                });
            }
            Ok(Given {
                def,
                written,
                value: value.as_deref(),
            })
        })
        .collect()
}

/// `kb_base` changes how every size is read, wherever it is written (fio
/// parses it first too), so it is resolved before anything else.
fn kb_base_of(given: &[Given<'_>]) -> Result<u64, JobError> {
    let Some(g) = given.iter().rev().find(|g| g.def.name == "kb_base") else {
        return Ok(KB_BASE_DEFAULT);
    };
    let text = g.value.unwrap_or_default().trim();
    match text {
        "1000" => Ok(1000),
        "1024" => Ok(1024),
        _ => Err(JobError::InvalidValue {
            option: g.written.to_string(),
            value: text.to_string(),
            reason: "must be 1000 or 1024".into(),
        }),
    }
}

/// The option reference as a Markdown table (docs/options.md, `iolab options`).
pub fn options_markdown() -> String {
    let mut out = String::from(
        "| Option | Aliases | Type | Default | Unit | Description |\n\
         |---|---|---|---|---|---|\n",
    );
    for o in OPTIONS.iter() {
        let aliases: Vec<String> = o.aliases.iter().map(|a| format!("`{a}`")).collect();
        let default = match o.default {
            DefaultValue::Value(v) => format!("`{v}`"),
            DefaultValue::Note(n) => n.to_string(),
        };
        let mut help = o.help.to_string();
        if !o.choices().is_empty() {
            help.push_str(&format!(" Values: {}.", o.choices().join(", ")));
        }
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} |\n",
            o.name,
            aliases.join(", "),
            o.kind.type_name(),
            md_cell(&default),
            o.unit,
            md_cell(&help)
        ));
    }
    out
}

fn md_cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}
