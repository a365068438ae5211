//! One option's value as the table's setters see it: the parse helpers
//! that turn failures into [`JobError`]s naming the option as written.

use super::Given;
use crate::error::JobError;
use crate::job::{BsSpec, CpusAllowedPolicy, RateProcess};
use crate::units::{self, parse_bool, parse_size, split_per_dir_trim};

/// Stores a parsed value: the one-line body of most setters in the table.
pub(crate) fn put<T>(slot: &mut T, value: Result<T, JobError>) -> Result<(), JobError> {
    *slot = value?;
    Ok(())
}

pub(crate) fn positive_size(text: &str, kb_base: u64) -> Result<u64, String> {
    match parse_size(text, kb_base)? {
        0 => Err("must be greater than 0".into()),
        n => Ok(n),
    }
}

pub(crate) fn parse_bs_range(text: &str, kb_base: u64) -> Result<BsSpec, String> {
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

/// fio's pattern syntax (`buffer_pattern`, `verify_pattern`): `0x` hex
/// bytes, a quoted string, or a decimal number (its bytes, least
/// significant first, as many as it needs).
pub(crate) fn parse_pattern(text: &str) -> Result<Vec<u8>, String> {
    let t = text.trim();
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        let hex = if hex.len() % 2 == 1 {
            format!("0{hex}")
        } else {
            hex.to_string()
        };
        return (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16))
            .collect::<Result<Vec<u8>, _>>()
            .map_err(|_| "not a hex number (0x followed by hex digits)".to_string())
            .and_then(nonempty);
    }
    for q in ['"', '\''] {
        if let Some(inner) = t.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return nonempty(inner.as_bytes().to_vec());
        }
    }
    let n: u64 = t.parse().map_err(|_| {
        "expected 0x-hex, a quoted string or a decimal number (combinations with '|' or \
         %o are not supported)"
            .to_string()
    })?;
    let used = 8 - (n.leading_zeros() / 8) as usize;
    Ok(n.to_le_bytes()[..used.max(1)].to_vec())
}

fn nonempty(v: Vec<u8>) -> Result<Vec<u8>, String> {
    if v.is_empty() {
        return Err("the pattern is empty".into());
    }
    Ok(v)
}

/// One option's value with the helpers that turn parse failures into
/// [`JobError`]s naming the option as written.
pub(crate) struct Val<'a> {
    pub(super) g: &'a Given<'a>,
    pub(super) kb_base: u64,
    /// False while table defaults are applied.
    pub(super) explicit: bool,
    /// A `read,write,trim` value's write and third parts, once parsed:
    /// the draft checks them when `rw=` is known (options/trims.rs).
    pub(super) trim_given: std::cell::Cell<Option<(Option<&'a str>, &'a str)>>,
}

impl Val<'_> {
    pub(crate) fn text(&self) -> &str {
        self.g.value.unwrap_or_default().trim()
    }

    pub(crate) fn invalid(&self, reason: impl Into<String>) -> JobError {
        JobError::InvalidValue {
            option: self.g.written.to_string(),
            value: self.g.value.unwrap_or_default().to_string(),
            reason: reason.into(),
        }
    }

    pub(crate) fn wrap<T>(&self, r: Result<T, String>) -> Result<T, JobError> {
        r.map_err(|e| self.invalid(e))
    }

    /// The text as an owned value, for `Option<String>` fields.
    pub(crate) fn some_text(&self) -> Result<Option<String>, JobError> {
        self.nonempty_text().map(|t| Some(t.to_string()))
    }

    /// `kb_base` is resolved before everything else (see `kb_base_of`);
    /// checked here too, so an overridden bad value is still reported.
    pub(crate) fn kb_base_check(&self) -> Result<(), JobError> {
        match self.text() {
            "1000" | "1024" => Ok(()),
            _ => Err(self.invalid("must be 1000 or 1024")),
        }
    }

    pub(crate) fn nonempty_text(&self) -> Result<&str, JobError> {
        match self.text() {
            "" => Err(self.invalid("must not be empty")),
            t => Ok(t),
        }
    }

    pub(crate) fn flag(&self) -> Result<bool, JobError> {
        self.wrap(parse_bool(self.g.value))
    }

    pub(crate) fn positive(&self, n: u64) -> Result<u64, JobError> {
        if n == 0 {
            return Err(self.invalid("must be greater than 0"));
        }
        Ok(n)
    }

    pub(crate) fn size_no_pct(&self) -> Result<u64, JobError> {
        if self.text().ends_with('%') {
            return Err(self.invalid(
                "percentages of the file size are not supported yet; give a size like 10g",
            ));
        }
        self.wrap(parse_size(self.text(), self.kb_base))
    }

    /// A whole percentage, 0-100.
    pub(crate) fn percent(&self) -> Result<u32, JobError> {
        let n = self.u32_min(0)?;
        if n > 100 {
            return Err(self.invalid("must be a percentage from 0 to 100"));
        }
        Ok(n)
    }

    /// A size under `kb_base` (no percentages).
    pub(crate) fn size(&self) -> Result<u64, JobError> {
        self.size_no_pct()
    }

    pub(crate) fn u32_min(&self, min: u32) -> Result<u32, JobError> {
        let n = self.wrap(units::parse_uint(self.text()))?;
        let n = u32::try_from(n).map_err(|_| self.invalid("too large"))?;
        if n < min {
            return Err(self.invalid(format!("must be at least {min}")));
        }
        Ok(n)
    }

    pub(crate) fn time(&self) -> Result<u64, JobError> {
        let super::OptionKind::Time { default_unit_ns } = self.g.def.kind else {
            unreachable!("time() on option '{}' which is not a time", self.g.def.name)
        };
        self.wrap(units::parse_time_ns(self.text(), default_unit_ns))
    }

    pub(crate) fn time_no_range(&self) -> Result<u64, JobError> {
        if self.text().contains(['-', ':']) {
            return Err(self.invalid("ranges (random start delays) are not supported yet"));
        }
        self.time()
    }

    pub(crate) fn rate_process(&self) -> Result<RateProcess, JobError> {
        match self.text() {
            "linear" => Ok(RateProcess::Linear),
            "poisson" => Ok(RateProcess::Poisson),
            _ => Err(self.invalid("expected linear or poisson")),
        }
    }

    pub(crate) fn cpus_policy(&self) -> Result<CpusAllowedPolicy, JobError> {
        match self.text() {
            "shared" => Ok(CpusAllowedPolicy::Shared),
            "split" => Ok(CpusAllowedPolicy::Split),
            _ => Err(self.invalid("expected shared or split")),
        }
    }

    /// Applies a `read,write[,trim]` value: each given direction is parsed
    /// and stored; an empty one keeps what was there (fio's rule). A trim
    /// value is parsed (so a bad one is an error) and kept for
    /// options/trims.rs.
    pub(crate) fn per_dir<T>(
        &self,
        slots: &mut [T; 2],
        parse: impl Fn(&str, u64) -> Result<T, String>,
    ) -> Result<(), JobError> {
        let text = self.g.value.unwrap_or_default().trim();
        let (parts, trim) = self.wrap(split_per_dir_trim(text))?;
        if let Some(t) = trim {
            self.wrap(parse(t, self.kb_base).map_err(|e| format!("trim value '{t}': {e}")))?;
            self.trim_given.set(Some((parts[1], t)));
        }
        for (slot, part) in slots.iter_mut().zip(parts) {
            if let Some(text) = part {
                *slot = self.wrap(parse(text, self.kb_base))?;
            }
        }
        Ok(())
    }
}
