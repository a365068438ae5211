//! Phase 2 of [`super::prepare`]: carry out what phase 1 decided for one
//! path — keep it, create and fill it, or fill the part still missing —
//! and say in one line what was done.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::Duration;

use super::plan::FileNeed;
use super::{fill, marker, Action, Checked, PreparedFile};
use crate::EngineError;

type Progress<'a> = &'a mut dyn FnMut(&str, u64, u64);

/// The prepared file and its note.
pub(super) fn act(
    c: Checked,
    progress: Progress<'_>,
) -> Result<(PreparedFile, String), EngineError> {
    let path = &c.need.path;
    let (size_bytes, note) = match c.action {
        Action::Keep => (c.size_bytes, c.note),
        Action::Create { to } => (to, create(path, to, &c.need, progress)?),
        Action::Fill { from, to, mark } => (
            c.size_bytes.max(to),
            complete(path, c.size_bytes, from, to, mark, &c.need, progress)?,
        ),
    };
    let file = PreparedFile {
        path: path.clone(),
        kind: c.kind,
        size_bytes,
        created_by_iolab: c.created_by_iolab,
        written: c.need.writes,
        direct_align_bytes: c.direct_align.map(|a| a.bytes),
    };
    Ok((file, note))
}

fn create(
    path: &Path,
    to: u64,
    need: &FileNeed,
    progress: Progress<'_>,
) -> Result<String, EngineError> {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(path);
    let f = f.map_err(|e| EngineError::Io {
        path: path.to_path_buf(),
        op: "create",
        source: e,
    })?;
    // Marked before filling: an interrupted fill leaves a file iolab knows
    // as its own (with 0 bytes filled), not a foreign one.
    marker::write(&f, path, 0)?;
    let took = fill::fill(&f, path, 0..to, need.prealloc, need.create_fsync, progress)?;
    let store = marker::write(&f, path, to)?;
    Ok(format!(
        "created {}: {to} bytes, filled with incompressible data in {}; {store}",
        path.display(),
        rate(to, took)
    ))
}

/// Fill `[from, to)` of an existing file: iolab's own (`mark`), or
/// another one the user allowed iolab to extend.
fn complete(
    path: &Path,
    size: u64,
    from: u64,
    to: u64,
    mark: bool,
    need: &FileNeed,
    progress: Progress<'_>,
) -> Result<String, EngineError> {
    let f = open_rw(path)?;
    let took = fill::fill(
        &f,
        path,
        from..to,
        need.prealloc,
        need.create_fsync,
        progress,
    )?;
    let whose = if mark {
        marker::write(&f, path, to)?;
        "created by iolab earlier"
    } else {
        "not created by iolab; allowed by --allow-overwrite"
    };
    let verb = if to > size { "extended" } else { "completed" };
    Ok(format!(
        "{verb} {} ({whose}): now {} bytes, filled bytes {from}..{to} with incompressible data in {}",
        path.display(),
        size.max(to),
        rate(to - from, took)
    ))
}

fn open_rw(path: &Path) -> Result<File, EngineError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| EngineError::Io {
            path: path.to_path_buf(),
            op: "open for writing",
            source: e,
        })
}

/// "1.20 s (853 MiB/s)".
fn rate(bytes: u64, took: Duration) -> String {
    let s = took.as_secs_f64();
    let mib_per_s = if s > 0.0 {
        bytes as f64 / s / (1 << 20) as f64
    } else {
        f64::INFINITY
    };
    format!("{s:.2} s ({mib_per_s:.0} MiB/s)")
}
