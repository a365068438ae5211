//! fio-compatible parsing of option values: sizes, times, booleans, ranges,
//! per-direction lists, block-size splits, CPU lists and percentile lists.
//!
//! Every parser returns `Err(reason)` with a sentence for a person; the
//! option layer ([`crate::options`]) wraps it into
//! [`crate::JobError::InvalidValue`] naming the option and the value.
//!
//! fio (3.33) was used as the reference, by running it on the null engine
//! and reading back `io_bytes` / `runtime` from its JSON output:
//!
//! - Size suffixes are case-insensitive; a trailing `b` is optional.
//!   With `kb_base=1024` (fio's default) `k`/`kb` mean 1024 and — fio's
//!   "compatibility" rule — `kib` means **1000**. With `kb_base=1000` it is
//!   the other way round (`k` = 1000, `KiB` = 1024). We do the same.
//! - A bare `Ki`, `Mi`, `Gi`... (no `B`) is read as `k`, `m`, `g`: a power
//!   of `kb_base`, so `4Gi` is 4 × 1024³ by default and 4 × 1000³ with
//!   `kb_base=1000` — what fio 3.33 computes (checked on its null engine),
//!   although its manual lists `Ki` among the powers of 1000. We do as fio
//!   does; the job layer notes the disagreement (jobs/lenient.py).
//! - fio silently reads garbage: `1.5k` as 1, `1kx` as 1024 and `-1` as 1.
//!   We reject these with a message instead of guessing.
//! - Times: a bare number takes the option's default unit (seconds for
//!   `runtime`, microseconds for `thinktime`); fio knows `us`/`usec`,
//!   `ms`/`msec`, `s`, `m`, `h`, `d` (case-insensitive, so `M` is minutes).
//!   fio 3.33 reads `sec`, `min` and `ns` as microseconds, against its
//!   manual; we give them their plain meaning.
//!
//! Hand-written rather than a units crate: fio's kb_base rule (inverted
//! IEC prefixes by default) is what users' job files rely on, and no crate
//! implements it.

/// fio's default `kb_base`.
pub const KB_BASE_DEFAULT: u64 = 1024;

/// Nanoseconds per microsecond: the default unit of `thinktime`.
pub const NS_PER_US: u64 = 1_000;
/// Nanoseconds per millisecond.
pub const NS_PER_MS: u64 = 1_000_000;
/// Nanoseconds per second: the default unit of `runtime`, `ramp_time`, `startdelay`.
pub const NS_PER_S: u64 = 1_000_000_000;

/// Splits `text` into its leading run of ASCII digits and the rest.
fn split_number(text: &str) -> (&str, &str) {
    let end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    text.split_at(end)
}

/// Rejects the inputs fio would silently misread, with the reason.
fn check_number_shape(text: &str, digits: &str, rest: &str) -> Result<(), String> {
    if text.is_empty() {
        return Err("empty value".into());
    }
    if text.starts_with('-') {
        return Err("must not be negative".into());
    }
    if digits.is_empty() {
        return Err("expected a whole number, optionally with a unit suffix".into());
    }
    if rest.starts_with('.') || rest.starts_with(',') {
        return Err(format!(
            "fractional values are not accepted (fio would silently truncate '{text}'); \
             use a smaller unit instead"
        ));
    }
    Ok(())
}

fn parse_digits(digits: &str) -> Result<u64, String> {
    digits
        .parse::<u64>()
        .map_err(|_| "number too large".to_string())
}

/// Multiplier of a size suffix under `kb_base` (1000 or 1024).
fn size_multiplier(suffix: &str, kb_base: u64) -> Result<u64, String> {
    let lower = suffix.to_ascii_lowercase();
    // fio's compatibility rule: IEC spellings take the *other* base.
    let iec_base = if kb_base == 1000 { 1024 } else { 1000 };
    let (power, base) = match lower.as_str() {
        "" | "b" => return Ok(1),
        "k" | "kb" => (1, kb_base),
        "m" | "mb" => (2, kb_base),
        "g" | "gb" => (3, kb_base),
        "t" | "tb" => (4, kb_base),
        "p" | "pb" => (5, kb_base),
        "kib" => (1, iec_base),
        "mib" => (2, iec_base),
        "gib" => (3, iec_base),
        "tib" => (4, iec_base),
        "pib" => (5, iec_base),
        // fio 3.33 reads a bare `Ki` as `k` (the kb_base unit: 1024 by
        // default), though its manual lists `Ki` with the powers of 1000.
        "ki" => (1, kb_base),
        "mi" => (2, kb_base),
        "gi" => (3, kb_base),
        "ti" => (4, kb_base),
        "pi" => (5, kb_base),
        _ => {
            return Err(format!(
                "unknown size unit '{suffix}' (use k, m, g, t, p, optionally with B or iB)"
            ))
        }
    };
    Ok(base.pow(power))
}

/// Parses a size in bytes: `4096`, `4k`, `4KiB`, `1g`, `0x1000`.
///
/// `kb_base` is 1024 (fio's default) or 1000; see the module doc for the rule.
/// Percentages are rejected here; options that accept them check first.
pub fn parse_size(text: &str, kb_base: u64) -> Result<u64, String> {
    let text = text.trim();
    if text.ends_with('%') {
        return Err("a percentage is not accepted here; give a size like 4k or 10g".into());
    }
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16)
            .map_err(|_| format!("'{text}' is not a valid hexadecimal number"));
    }
    let (digits, suffix) = split_number(text);
    check_number_shape(text, digits, suffix)?;
    let value = parse_digits(digits)?;
    let mult = size_multiplier(suffix, kb_base)?;
    value
        .checked_mul(mult)
        .ok_or_else(|| "size too large".to_string())
}

/// Parses a time into nanoseconds. A bare number is in `default_unit_ns`
/// (e.g. [`NS_PER_S`] for `runtime`, [`NS_PER_US`] for `thinktime`).
pub fn parse_time_ns(text: &str, default_unit_ns: u64) -> Result<u64, String> {
    let text = text.trim();
    let (digits, suffix) = split_number(text);
    check_number_shape(text, digits, suffix)?;
    let value = parse_digits(digits)?;
    let mult = match suffix.to_ascii_lowercase().as_str() {
        "" => default_unit_ns,
        "ns" | "nsec" => 1,
        "us" | "usec" => NS_PER_US,
        "ms" | "msec" => NS_PER_MS,
        "s" | "sec" => NS_PER_S,
        "m" | "min" => 60 * NS_PER_S,
        "h" => 3_600 * NS_PER_S,
        "d" => 86_400 * NS_PER_S,
        _ => {
            return Err(format!(
                "unknown time unit '{suffix}' (use ns, us, ms, s, m, h or d)"
            ))
        }
    };
    value
        .checked_mul(mult)
        .ok_or_else(|| "time too large".to_string())
}

/// Parses one of iolab's own durations (not a fio option: `--interval`,
/// a plan's durations) into nanoseconds: a decimal number (`1.5s`, `0.25`)
/// with a unit `ns`, `us`/`µs`, `ms`, `s`, `m` or `h`, or none for seconds.
/// Rounded to the nearest nanosecond.
pub fn parse_duration_ns(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = (&text[..end], text[end..].trim_start());
    let value = parse_float(number)
        .map_err(|_| "expected a duration such as 1s, 500ms or 2 (seconds)".to_string())?;
    let unit_ns = match unit {
        "ns" => 1.0,
        "us" | "µs" => NS_PER_US as f64,
        "ms" => NS_PER_MS as f64,
        "" | "s" => NS_PER_S as f64,
        "m" => 60.0 * NS_PER_S as f64,
        "h" => 3_600.0 * NS_PER_S as f64,
        _ => {
            return Err(format!(
                "unknown time unit '{unit}' (use ns, us, ms, s, m or h)"
            ))
        }
    };
    let ns = (value * unit_ns).round();
    if ns >= u64::MAX as f64 {
        return Err("time too large".into());
    }
    Ok(ns as u64)
}

/// Parses a boolean: bare (`None`) = true, `1`/`0`, `true`/`false`.
pub fn parse_bool(value: Option<&str>) -> Result<bool, String> {
    let Some(text) = value else { return Ok(true) };
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err("expected 0 or 1 (or true/false; a bare flag means 1)".into()),
    }
}

/// Parses a non-negative whole number (decimal or `0x` hexadecimal), no units.
pub fn parse_uint(text: &str) -> Result<u64, String> {
    let text = text.trim();
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16)
            .map_err(|_| format!("'{text}' is not a valid hexadecimal number"));
    }
    let (digits, rest) = split_number(text);
    check_number_shape(text, digits, rest)?;
    if !rest.is_empty() {
        return Err("expected a whole number without a unit".into());
    }
    parse_digits(digits)
}

/// Parses a range of sizes `min-max` (fio also accepts `min:max`).
/// Returns `(min, max)`; `min > max` is an error (fio swaps them silently).
pub fn parse_size_range(text: &str, kb_base: u64) -> Result<(u64, u64), String> {
    let text = text.trim();
    let Some((lo, hi)) = text.split_once(['-', ':']) else {
        return Err("expected a range like 4k-64k".into());
    };
    let min = parse_size(lo, kb_base)?;
    let max = parse_size(hi, kb_base)?;
    if min > max {
        return Err(format!("minimum {min} is larger than maximum {max}"));
    }
    Ok((min, max))
}

/// Splits a per-direction value `read,write[,trim]` (fio's rule for `bs`,
/// `rate`, `bssplit`, …): `4k` → both; `4k,8k` → read 4k, write 8k;
/// `,8k` → read unchanged; `4k,` → write unchanged. `None` = unchanged.
/// The third (trim) value is dropped here; see [`split_per_dir_trim`].
pub fn split_per_dir(text: &str) -> Result<[Option<&str>; 2], String> {
    split_per_dir_trim(text).map(|(dirs, _)| dirs)
}

/// [`split_per_dir`] that also returns a third, trim value (`read,write,trim`).
/// Trims use the write value, so the option table checks the trim value
/// against it once `rw=` is known (options/trims.rs).
pub fn split_per_dir_trim(text: &str) -> Result<([Option<&str>; 2], Option<&str>), String> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    fn some(s: &str) -> Option<&str> {
        (!s.is_empty()).then_some(s)
    }
    let (dirs, trim) = match parts.as_slice() {
        [one] => ([some(one), some(one)], None),
        [r, w] => ([some(r), some(w)], None),
        [r, w, t] => ([some(r), some(w)], some(t)),
        _ => return Err("at most read,write,trim values separated by ','".into()),
    };
    if dirs.iter().all(Option::is_none) && trim.is_none() {
        return Err("empty value".into());
    }
    Ok((dirs, trim))
}

/// Parses one direction of `bssplit`: `4k/50:64k/30:128k/` → (bytes, percent).
/// Blank shares split what is left evenly (the first blanks get the
/// remainder so the total is exactly 100). Entries with share 0 are dropped.
pub fn parse_bssplit(text: &str, kb_base: u64) -> Result<Vec<(u64, u32)>, String> {
    let mut entries: Vec<(u64, Option<u32>)> = Vec::new();
    for item in text.split(':') {
        let Some((size, share)) = item.split_once('/') else {
            return Err(format!("entry '{item}' is not size/percent (e.g. 4k/50)"));
        };
        let bytes = parse_size(size, kb_base)?;
        if bytes == 0 {
            return Err(format!("block size in '{item}' must be greater than 0"));
        }
        let share = match share.trim() {
            "" => None,
            s => Some(parse_share(s)?),
        };
        entries.push((bytes, share));
    }
    fill_blank_shares(entries)
}

fn parse_share(text: &str) -> Result<u32, String> {
    let pct = parse_uint(text).map_err(|e| format!("share '{text}': {e} (whole percent only)"))?;
    u32::try_from(pct)
        .ok()
        .filter(|p| *p <= 100)
        .ok_or_else(|| format!("share {text} is more than 100 percent"))
}

fn fill_blank_shares(entries: Vec<(u64, Option<u32>)>) -> Result<Vec<(u64, u32)>, String> {
    let given: u32 = entries.iter().filter_map(|(_, s)| *s).sum();
    let blanks = entries.iter().filter(|(_, s)| s.is_none()).count() as u32;
    if given > 100 {
        return Err(format!(
            "shares add up to {given} percent; they must add up to 100"
        ));
    }
    if blanks == 0 && given != 100 {
        return Err(format!(
            "shares add up to {given} percent; they must add up to 100"
        ));
    }
    let left = 100 - given;
    if blanks > 0 && left < blanks {
        return Err(format!(
            "only {left} percent left for {blanks} entries without a share"
        ));
    }
    let mut extra = if blanks > 0 { left % blanks } else { 0 };
    let mut out = Vec::with_capacity(entries.len());
    for (bytes, share) in entries {
        let pct = share.unwrap_or_else(|| {
            let bonus = u32::from(extra > 0);
            extra = extra.saturating_sub(1);
            left / blanks + bonus
        });
        if pct > 0 {
            out.push((bytes, pct));
        }
    }
    Ok(out)
}

/// Highest CPU index accepted in a CPU list: far above any machine, low
/// enough that a typo cannot make the engine build a huge CPU set.
pub const MAX_CPU_INDEX: usize = 65_535;

/// Parses a CPU list `0-3,6` into sorted, distinct CPU indexes.
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, String> {
    let mut cpus = Vec::new();
    for item in text.split(',').map(str::trim) {
        let (lo, hi) = match item.split_once('-') {
            Some((a, b)) => (parse_cpu(a)?, parse_cpu(b)?),
            None => (parse_cpu(item)?, parse_cpu(item)?),
        };
        if lo > hi {
            return Err(format!("CPU range '{item}' runs backwards"));
        }
        cpus.extend(lo..=hi);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

fn parse_cpu(text: &str) -> Result<usize, String> {
    let n = parse_uint(text).map_err(|e| format!("CPU '{text}': {e}"))?;
    usize::try_from(n)
        .ok()
        .filter(|n| *n <= MAX_CPU_INDEX)
        .ok_or_else(|| format!("CPU {text} is out of range (max {MAX_CPU_INDEX})"))
}

/// Parses a finite decimal number (`99.9`, `1.2`).
pub fn parse_float(text: &str) -> Result<f64, String> {
    let text = text.trim();
    let ok = !text.is_empty() && text.chars().all(|c| c.is_ascii_digit() || c == '.');
    match text.parse::<f64>() {
        Ok(v) if ok && v.is_finite() => Ok(v),
        _ => Err(format!("'{text}' is not a number")),
    }
}

/// Parses a percentile list `50:90:99.9` (each in (0, 100]), sorted, distinct.
pub fn parse_percentile_list(text: &str) -> Result<Vec<f64>, String> {
    let mut out = Vec::new();
    for item in text.split(':') {
        let p = parse_float(item)?;
        if !(p > 0.0 && p <= 100.0) {
            return Err(format!("percentile {item} is outside (0, 100]"));
        }
        out.push(p);
    }
    out.sort_by(f64::total_cmp);
    out.dedup();
    Ok(out)
}
