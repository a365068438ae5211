//! The mark iolab leaves on files it created, so a later run may reuse
//! (and write to) them without `--allow-overwrite`, and how much of each
//! was filled, so an interrupted fill is completed rather than trusted.
//!
//! The mark is the extended attribute `user.iolab.created` with the value
//! `iolab-created v1 filled_bytes=N`. An xattr lives on the inode: it goes
//! away with the file, survives renames, and a different file put in its
//! place does not carry it — exactly the identity we need. Where the
//! filesystem has no user xattrs (vfat, older tmpfs, some network
//! filesystems), the mark is a line in a sidecar file `.iolab-created` in
//! the same directory: `inode <TAB> birth_time_ns <TAB> filled_bytes <TAB>
//! name`. Inode numbers are reused after deletion, so the birth time (when
//! the filesystem reports one) must match as well.

use std::fs::{self, File};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, StatxFlags, XattrFlags};
use rustix::io::Errno;

use super::io_err;
use crate::EngineError;

pub(crate) const XATTR_NAME: &str = "user.iolab.created";
pub(crate) const SIDECAR_NAME: &str = ".iolab-created";

/// Where a mark was written, for the layout notes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Store {
    Xattr,
    Sidecar(PathBuf),
}

impl std::fmt::Display for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Store::Xattr => write!(f, "marked with xattr {XATTR_NAME}"),
            Store::Sidecar(p) => write!(
                f,
                "recorded in {} (no user xattrs on this filesystem)",
                p.display()
            ),
        }
    }
}

/// `Some(filled_bytes)` if iolab created the file, `None` otherwise.
pub(crate) fn read(file: &File, path: &Path) -> Result<Option<u64>, EngineError> {
    let mut value = [0u8; 128];
    match rustix::fs::fgetxattr(file, XATTR_NAME, &mut value) {
        Ok(n) => return Ok(Some(parse_value(&value[..n]))),
        Err(Errno::NODATA | Errno::NOTSUP) => {}
        Err(e) => return Err(io_err(path, "read xattr user.iolab.created", e.into())),
    }
    let id = identity(file, path)?;
    Ok(read_sidecar(&sidecar_path(path), path)?
        .into_iter()
        .find(|e| e.matches(&id))
        .map(|e| e.filled_bytes))
}

/// Mark `file` as iolab's with `filled_bytes` filled.
pub(crate) fn write(file: &File, path: &Path, filled_bytes: u64) -> Result<Store, EngineError> {
    let value = format!("iolab-created v1 filled_bytes={filled_bytes}");
    match rustix::fs::fsetxattr(file, XATTR_NAME, value.as_bytes(), XattrFlags::empty()) {
        Ok(()) => return Ok(Store::Xattr),
        Err(Errno::NOTSUP) => {}
        Err(e) => return Err(io_err(path, "set xattr user.iolab.created", e.into())),
    }
    let id = identity(file, path)?;
    let sidecar = sidecar_path(path);
    let mut entries = read_sidecar(&sidecar, path)?;
    entries.retain(|e| e.name != id.name);
    entries.push(Entry { filled_bytes, ..id });
    write_sidecar(&sidecar, &entries)?;
    Ok(Store::Sidecar(sidecar))
}

/// A value we cannot parse still marks the file as ours, but nothing of
/// it counts as filled: it is filled again.
fn parse_value(v: &[u8]) -> u64 {
    let text = String::from_utf8_lossy(v);
    text.split_whitespace()
        .find_map(|w| w.strip_prefix("filled_bytes=")?.parse().ok())
        .unwrap_or(0)
}

/// One sidecar line; also used as a file's identity (with filled_bytes 0).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    ino: u64,
    /// 0 when the filesystem does not report a birth time.
    birth_ns: u64,
    filled_bytes: u64,
    name: String,
}

impl Entry {
    fn matches(&self, id: &Entry) -> bool {
        let birth_ok = self.birth_ns == 0 || id.birth_ns == 0 || self.birth_ns == id.birth_ns;
        self.name == id.name && self.ino == id.ino && birth_ok
    }
}

fn identity(file: &File, path: &Path) -> Result<Entry, EngineError> {
    let st = rustix::fs::statx(
        file,
        "",
        AtFlags::EMPTY_PATH,
        StatxFlags::INO | StatxFlags::BTIME,
    )
    .map_err(|e| io_err(path, "statx", e.into()))?;
    let birth_ns = if st.stx_mask & StatxFlags::BTIME.bits() != 0 {
        (st.stx_btime.tv_sec as u64)
            .wrapping_mul(1_000_000_000)
            .wrapping_add(u64::from(st.stx_btime.tv_nsec))
    } else {
        0
    };
    let name = file_name(path)?;
    Ok(Entry {
        ino: st.stx_ino,
        birth_ns,
        filled_bytes: 0,
        name,
    })
}

fn file_name(path: &Path) -> Result<String, EngineError> {
    match path.file_name().and_then(|n| n.to_str()) {
        Some(n) if !n.contains(['\n', '\t']) => Ok(n.to_string()),
        _ => Err(EngineError::File {
            path: path.to_path_buf(),
            reason: format!(
                "this filesystem has no user xattrs, so iolab records its files in {SIDECAR_NAME}, which cannot hold \
                 this name (not UTF-8, or has a tab or newline); rename the file"
            ),
        }),
    }
}

fn sidecar_path(path: &Path) -> PathBuf {
    super::parent_dir(path).join(SIDECAR_NAME)
}

fn read_sidecar(sidecar: &Path, path: &Path) -> Result<Vec<Entry>, EngineError> {
    let text = match fs::read_to_string(sidecar) {
        Ok(t) => t,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err(path, "read .iolab-created", e)),
    };
    Ok(text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(parse_line)
        .collect())
}

fn parse_line(line: &str) -> Option<Entry> {
    let mut f = line.splitn(4, '\t');
    Some(Entry {
        ino: f.next()?.parse().ok()?,
        birth_ns: f.next()?.parse().ok()?,
        filled_bytes: f.next()?.parse().ok()?,
        name: f.next()?.to_string(),
    })
}

/// Write the whole sidecar to a temporary name and rename it over the old
/// one, so a crash never leaves a half-written list.
fn write_sidecar(sidecar: &Path, entries: &[Entry]) -> Result<(), EngineError> {
    let mut text =
        String::from("# files created by iolab: inode\tbirth_time_ns\tfilled_bytes\tname\n");
    for e in entries {
        text.push_str(&format!(
            "{}\t{}\t{}\t{}\n",
            e.ino, e.birth_ns, e.filled_bytes, e.name
        ));
    }
    let tmp = sidecar.with_file_name(format!("{SIDECAR_NAME}.tmp.{}", std::process::id()));
    fs::write(&tmp, text).map_err(|e| io_err(&tmp, "write", e))?;
    fs::rename(&tmp, sidecar).map_err(|e| io_err(sidecar, "rename", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_and_lines_round_trip() {
        assert_eq!(parse_value(b"iolab-created v1 filled_bytes=4096"), 4096);
        assert_eq!(parse_value(b"garbage"), 0);
        let e = parse_line("12\t34\t56\tname with spaces").unwrap();
        assert_eq!(
            (e.ino, e.birth_ns, e.filled_bytes, e.name.as_str()),
            (12, 34, 56, "name with spaces")
        );
        assert!(parse_line("x\t1\t2\tn").is_none());
    }

    #[test]
    fn identity_needs_same_inode_and_birth_time() {
        let rec = Entry {
            ino: 5,
            birth_ns: 100,
            filled_bytes: 9,
            name: "f".into(),
        };
        let id = |ino, birth_ns| Entry {
            ino,
            birth_ns,
            filled_bytes: 0,
            name: "f".into(),
        };
        assert!(rec.matches(&id(5, 100)));
        assert!(rec.matches(&id(5, 0)));
        assert!(
            !rec.matches(&id(5, 101)),
            "a new file that reused the inode is not ours"
        );
        assert!(!rec.matches(&id(6, 100)));
    }
}
