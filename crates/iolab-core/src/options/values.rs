//! Parsers for values that are specific to one option: `rw`, `ioengine`,
//! `sync`, `random_distribution`, `filename`/`directory` lists. Like
//! [`crate::units`], each returns `Err(reason)` for the caller to wrap.

use std::path::PathBuf;

use crate::job::{IoEngine, Pattern, RandomDistribution, SyncMode, VerifyKind, Zone};
use crate::units::{parse_float, parse_size};

/// Which directions an `rw=` value does; the mix share comes from `rwmixread`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RwDirs {
    Read,
    Write,
    Mixed,
    /// `trim`, `randtrim`.
    Trim,
    /// `trimwrite`, `randtrimwrite`: each block trimmed, then written.
    TrimWrite,
}

/// Parses `rw=`, with fio's offset modifier for sequential patterns:
/// `rw=read:17m` adds 17 MiB after each I/O (a hole), `rw=read:-8k` steps
/// back (reads backwards with bs=4k). Returns the added bytes (0 without).
/// The random form (`randread:8`, I/Os per random offset) is refused.
pub(super) fn parse_rw(text: &str, kb_base: u64) -> Result<(Pattern, RwDirs, i64), String> {
    let text = text.trim();
    let (kind, modifier) = match text.split_once(':') {
        Some((kind, modifier)) => (kind.trim(), Some(modifier.trim())),
        None => (text, None),
    };
    let (pattern, dirs) = parse_rw_kind(kind)?;
    let Some(modifier) = modifier else {
        return Ok((pattern, dirs, 0));
    };
    if pattern == Pattern::Random {
        return Err(format!(
            "'{kind}:{modifier}' (I/Os per random offset) is not supported yet; write rw={kind}"
        ));
    }
    let (negative, magnitude) = match modifier.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, modifier),
    };
    let bytes = parse_size(magnitude, kb_base)?;
    let bytes =
        i64::try_from(bytes).map_err(|_| format!("offset modifier '{modifier}' is too large"))?;
    Ok((pattern, dirs, if negative { -bytes } else { bytes }))
}

fn parse_rw_kind(text: &str) -> Result<(Pattern, RwDirs), String> {
    Ok(match text {
        "read" => (Pattern::Sequential, RwDirs::Read),
        "write" => (Pattern::Sequential, RwDirs::Write),
        "randread" => (Pattern::Random, RwDirs::Read),
        "randwrite" => (Pattern::Random, RwDirs::Write),
        "rw" | "readwrite" => (Pattern::Sequential, RwDirs::Mixed),
        "randrw" => (Pattern::Random, RwDirs::Mixed),
        "trim" => (Pattern::Sequential, RwDirs::Trim),
        "randtrim" => (Pattern::Random, RwDirs::Trim),
        "trimwrite" => (Pattern::Sequential, RwDirs::TrimWrite),
        "randtrimwrite" => (Pattern::Random, RwDirs::TrimWrite),
        _ => {
            return Err(
                "expected read, write, randread, randwrite, rw, readwrite, randrw, \
                 trim, randtrim, trimwrite or randtrimwrite"
                    .into(),
            )
        }
    })
}

/// Parses `ioengine=`: a name of the engine table. Others are refused
/// rather than mapped to a near one, because they issue different system
/// calls (and so cost different CPU).
pub(super) fn parse_ioengine(text: &str) -> Result<IoEngine, String> {
    let name = text.trim();
    if let Some(engine) = IoEngine::from_name(name) {
        return Ok(engine);
    }
    match name {
        "iouring" | "uring" => Err("did you mean io_uring?".into()),
        _ => Err(format!(
            "iolab has no '{name}' engine; supported engines: {}",
            crate::engines::ENGINE_NAMES.join(", ")
        )),
    }
}

/// Parses `verify=` (fio's names; `crc32c-intel` is crc32c, which uses the
/// CPU's instruction where there is one).
pub(super) fn parse_verify(text: &str) -> Result<VerifyKind, String> {
    Ok(match text.trim() {
        "0" | "none" => VerifyKind::Off,
        "crc32c" | "crc32c-intel" => VerifyKind::Crc32c,
        "crc64" => VerifyKind::Crc64,
        "crc32" => VerifyKind::Crc32,
        "crc16" => VerifyKind::Crc16,
        "crc7" => VerifyKind::Crc7,
        "md5" => VerifyKind::Md5,
        "sha1" => VerifyKind::Sha1,
        "sha256" => VerifyKind::Sha256,
        "xxhash" => VerifyKind::Xxhash,
        "meta" => VerifyKind::Meta,
        "pattern" => VerifyKind::Pattern,
        "null" => VerifyKind::Null,
        other @ ("sha224" | "sha384" | "sha512" | "sha3-224" | "sha3-256" | "sha3-384"
        | "sha3-512" | "xxhash64") => {
            return Err(format!(
                "verify={other} is not supported yet; use crc32c, crc32, crc64, crc16, crc7, md5, \
                 sha1, sha256, xxhash, meta, pattern or null"
            ))
        }
        _ => {
            return Err(
                "expected 0, crc32c, crc32c-intel, crc32, crc64, crc16, crc7, md5, sha1, sha256, \
                 xxhash, meta, pattern or null"
                    .into(),
            )
        }
    })
}

/// Parses `sync=`.
pub(super) fn parse_sync(text: &str) -> Result<SyncMode, String> {
    match text.trim() {
        "none" | "0" => Ok(SyncMode::None),
        "sync" | "1" => Ok(SyncMode::Sync),
        "dsync" => Ok(SyncMode::Dsync),
        _ => Err("expected none (or 0), sync (or 1) or dsync".into()),
    }
}

/// A whole percentage, 0 to 100 (`percentage_random=30`).
pub(super) fn parse_percent(text: &str) -> Result<u32, String> {
    match crate::units::parse_uint(text.trim()) {
        Ok(n) if n <= 100 => Ok(n as u32),
        _ => Err("expected a whole percentage from 0 to 100".into()),
    }
}

/// Parses `fadvise_hint=` (fio's values).
pub(super) fn parse_fadvise_hint(text: &str) -> Result<crate::job::FadviseHint, String> {
    use crate::job::FadviseHint;
    match text.trim() {
        "0" => Ok(FadviseHint::None),
        "1" => Ok(FadviseHint::Pattern),
        "random" => Ok(FadviseHint::Random),
        "sequential" => Ok(FadviseHint::Sequential),
        "noreuse" => Ok(FadviseHint::Noreuse),
        _ => Err("expected 0, 1 (by the job's pattern), random, sequential or noreuse".into()),
    }
}

/// Parses `thinktime_blocks_type=` (fio's values).
pub(super) fn parse_think_blocks_type(text: &str) -> Result<crate::job::ThinkBlocksType, String> {
    use crate::job::ThinkBlocksType;
    match text.trim() {
        "complete" => Ok(ThinkBlocksType::Complete),
        "issue" => Ok(ThinkBlocksType::Issue),
        _ => Err("expected complete or issue".into()),
    }
}

/// Parses `random_distribution=`.
pub(super) fn parse_distribution(text: &str) -> Result<RandomDistribution, String> {
    let text = text.trim();
    if let Some(args) = text.strip_prefix("sequence:") {
        return super::data_shape::parse_sequence(args);
    }
    if text.contains(',') {
        return Err("per-direction distributions are not supported yet; give one for both".into());
    }
    let (kind, args) = text.split_once(':').unwrap_or((text, ""));
    match kind {
        "random" if args.is_empty() => Ok(RandomDistribution::Uniform),
        "random" => Err("random takes no argument".into()),
        "zipf" => single_arg(kind, args, "zipf:1.2")
            .and_then(check_zipf)
            .map(RandomDistribution::Zipf),
        "pareto" => single_arg(kind, args, "pareto:0.9")
            .and_then(check_pareto)
            .map(RandomDistribution::Pareto),
        "normal" => single_arg(kind, args, "normal:10")
            .and_then(check_normal)
            .map(RandomDistribution::Normal),
        "zoned" => parse_zones(args).map(RandomDistribution::Zoned),
        "zoned_abs" => Err("zoned_abs is not supported yet; use zoned with percentages".into()),
        _ => Err("expected random, zipf:θ, pareto:h, normal:dev or zoned:a/s:…".into()),
    }
}

fn single_arg(kind: &str, args: &str, example: &str) -> Result<f64, String> {
    if args.is_empty() {
        return Err(format!("{kind} needs a parameter, e.g. {example}"));
    }
    if args.contains(':') {
        return Err(format!(
            "the second parameter of {kind} (the centre) is not supported yet; give one, e.g. {example}"
        ));
    }
    parse_float(args)
}

fn check_zipf(theta: f64) -> Result<f64, String> {
    if theta <= 0.0 || theta == 1.0 {
        return Err("zipf theta must be greater than 0 and not 1".into());
    }
    Ok(theta)
}

fn check_pareto(h: f64) -> Result<f64, String> {
    if !(h > 0.0 && h < 1.0) {
        return Err("pareto h must be between 0 and 1 (exclusive)".into());
    }
    Ok(h)
}

fn check_normal(dev: f64) -> Result<f64, String> {
    if !(dev > 0.0 && dev <= 100.0) {
        return Err("normal deviation must be in (0, 100] percent of the region".into());
    }
    Ok(dev)
}

/// `zoned:60/10:30/20:10/70` — access share / size share, each adding up to 100.
fn parse_zones(args: &str) -> Result<Vec<Zone>, String> {
    if args.is_empty() {
        return Err("zoned needs zones, e.g. zoned:60/10:30/20:10/70".into());
    }
    let mut zones: Vec<Zone> = Vec::new();
    let items: Vec<&str> = args.split(':').collect();
    for (i, item) in items.iter().enumerate() {
        let Some((access, size)) = item.split_once('/') else {
            return Err(format!("zone '{item}' is not access%/size% (e.g. 60/10)"));
        };
        // fio: a last zone written without a size ("20/") covers the rest.
        let size_pct = if size.trim().is_empty() && i + 1 == items.len() {
            100.0 - zones.iter().map(|z| z.size_pct).sum::<f64>()
        } else {
            parse_float(size)?
        };
        let zone = Zone {
            access_pct: parse_float(access)?,
            size_pct,
        };
        if zone.size_pct <= 0.0 {
            return Err(format!("zone '{item}' has no size"));
        }
        zones.push(zone);
    }
    check_sum(zones.iter().map(|z| z.access_pct).sum(), "access")?;
    check_sum(zones.iter().map(|z| z.size_pct).sum(), "size")?;
    Ok(zones)
}

fn check_sum(total: f64, what: &str) -> Result<(), String> {
    // Shares are written with at most a few decimals; allow float rounding only.
    if (total - 100.0).abs() > 1e-6 {
        return Err(format!(
            "{what} shares add up to {total}; they must add up to 100"
        ));
    }
    Ok(())
}

/// Splits a `:`-separated path list; `\:` is a literal colon (fio's escape).
pub(super) fn split_paths(text: &str) -> Result<Vec<String>, String> {
    let mut out = vec![String::new()];
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                chars.next();
                out.last_mut().expect("never empty").push(':');
            }
            ':' => out.push(String::new()),
            c => out.last_mut().expect("never empty").push(c),
        }
    }
    if out.iter().any(|p| p.trim().is_empty()) {
        return Err("empty entry in the ':'-separated list".into());
    }
    Ok(out)
}

/// Parses `filename=` (relative entries are placed under `directory`).
pub(super) fn parse_filenames(text: &str, dir: Option<&PathBuf>) -> Result<Vec<PathBuf>, String> {
    let names = split_paths(text)?;
    if names.iter().any(|n| n == "-") {
        return Err("'-' (stdin/stdout) is not supported; name a file or device".into());
    }
    Ok(names
        .into_iter()
        .map(|n| match dir {
            Some(d) if !n.starts_with('/') => d.join(n),
            _ => PathBuf::from(n),
        })
        .collect())
}

/// Parses `directory=` (one directory; fio's list form is not supported).
pub(super) fn parse_directory(text: &str) -> Result<PathBuf, String> {
    match split_paths(text)?.as_slice() {
        [one] => Ok(PathBuf::from(one)),
        _ => Err(
            "one directory only (fio's dir1:dir2 form is not supported yet; write \
                  '\\:' for a colon in the name)"
                .into(),
        ),
    }
}

/// fio's `cpumask`: a bit mask (decimal or 0x hex) whose bit N allows CPU N.
pub(super) fn parse_cpu_mask(text: &str) -> Result<Vec<usize>, String> {
    let mask = crate::units::parse_uint(text)?;
    if mask == 0 {
        return Err("the mask allows no CPU (set at least one bit)".into());
    }
    Ok((0..64).filter(|bit| mask >> bit & 1 == 1).collect())
}
