//! Who is using a block device, and which filesystem holds a file.
//!
//! Parsers for `/proc/self/mountinfo`, `/proc/mounts` and `/proc/swaps`
//! (pure functions over the text, so they are tested on fixed input), and
//! readers for the sysfs facts about a device: its partitions and its
//! holders (device-mapper, md RAID, bcache... stacked on top of it).
//! [`in_use`] puts them together for the write-safety check of a device.

use std::fs;
use std::path::{Path, PathBuf};

/// One line of `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    pub major: u32,
    pub minor: u32,
    pub mount_point: String,
    pub fstype: String,
    pub source: String,
}

/// Parse `/proc/self/mountinfo` (see proc(5)): `id parent major:minor root
/// mount_point options [optional fields...] - fstype source super_options`.
/// Lines that do not follow the format are skipped.
pub fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    text.lines().filter_map(parse_mountinfo_line).collect()
}

fn parse_mountinfo_line(line: &str) -> Option<MountEntry> {
    let fields: Vec<&str> = line.split(' ').collect();
    let (major, minor) = fields.get(2)?.split_once(':')?;
    let dash = fields.iter().position(|f| *f == "-")?;
    Some(MountEntry {
        major: major.parse().ok()?,
        minor: minor.parse().ok()?,
        mount_point: unescape_octal(fields.get(4)?),
        fstype: fields.get(dash + 1)?.to_string(),
        source: unescape_octal(fields.get(dash + 2)?),
    })
}

/// The kernel writes space, tab, newline and backslash in mount paths as
/// `\040`, `\011`, `\012`, `\134`.
pub fn unescape_octal(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `(source, mount_point)` of each line of `/proc/mounts`.
pub fn parse_proc_mounts(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            Some((unescape_octal(f.next()?), unescape_octal(f.next()?)))
        })
        .collect()
}

/// Paths of active swap areas in `/proc/swaps` (the first line is a header).
pub fn parse_swaps(text: &str) -> Vec<String> {
    text.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .map(unescape_octal)
        .collect()
}

/// A block device or one of its partitions, as named in messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DevNode {
    /// "the device" or "its partition sdb1".
    pub label: String,
    pub major: u32,
    pub minor: u32,
    /// `/dev/<name>` (or the path the user gave for the device itself).
    pub path: PathBuf,
}

/// Why a device (or any of its partitions) must not be written to, from
/// the mount and swap tables given as text; `None` if it is not in them.
/// `canon` resolves symlinks (`/dev/disk/by-id/...`, `/dev/mapper/...`).
pub fn busy_in_tables(
    nodes: &[DevNode],
    mountinfo: &str,
    proc_mounts: &str,
    swaps: &str,
    canon: &dyn Fn(&Path) -> PathBuf,
) -> Option<String> {
    let entries = parse_mountinfo(mountinfo);
    for node in nodes {
        if let Some(m) = entries
            .iter()
            .find(|m| (m.major, m.minor) == (node.major, node.minor))
        {
            return Some(format!(
                "{} is mounted at {} ({})",
                node.label, m.mount_point, m.fstype
            ));
        }
    }
    let same = |node: &DevNode, other: &str| {
        other.starts_with('/') && canon(Path::new(other)) == canon(&node.path)
    };
    for node in nodes {
        if let Some((_, mp)) = parse_proc_mounts(proc_mounts)
            .iter()
            .find(|(src, _)| same(node, src))
        {
            return Some(format!("{} is mounted at {mp}", node.label));
        }
        if parse_swaps(swaps).iter().any(|s| same(node, s)) {
            return Some(format!("{} is in use as swap", node.label));
        }
    }
    None
}

/// Why a device must not be written to, from the live system: mounts,
/// swap, and holders in sysfs. `None` if nothing uses it.
pub fn in_use(path: &Path, major: u32, minor: u32) -> Option<String> {
    let nodes = device_nodes(path, major, minor);
    let read = |p: &str| fs::read_to_string(p).unwrap_or_default();
    let canon = |p: &Path| fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    if let Some(why) = busy_in_tables(
        &nodes,
        &read("/proc/self/mountinfo"),
        &read("/proc/mounts"),
        &read("/proc/swaps"),
        &canon,
    ) {
        return Some(why);
    }
    nodes.iter().find_map(|node| {
        let holders = list_dir(&sysfs_dir(node.major, node.minor).join("holders"));
        (!holders.is_empty()).then(|| {
            format!(
                "{} is held by {} (device-mapper, RAID or another layer stacked on it)",
                node.label,
                holders.join(", ")
            )
        })
    })
}

/// The device itself and its partitions (from sysfs: a partition is a
/// subdirectory of the disk's directory that has a `partition` file).
fn device_nodes(path: &Path, major: u32, minor: u32) -> Vec<DevNode> {
    let mut nodes = vec![DevNode {
        label: "the device".into(),
        major,
        minor,
        path: path.to_path_buf(),
    }];
    let dir = sysfs_dir(major, minor);
    for name in list_dir(&dir) {
        let part = dir.join(&name);
        if !part.join("partition").exists() {
            continue;
        }
        let dev = fs::read_to_string(part.join("dev")).unwrap_or_default();
        if let Some((ma, mi)) = dev.trim().split_once(':') {
            if let (Ok(ma), Ok(mi)) = (ma.parse(), mi.parse()) {
                let path = PathBuf::from("/dev").join(&name);
                nodes.push(DevNode {
                    label: format!("its partition {name}"),
                    major: ma,
                    minor: mi,
                    path,
                });
            }
        }
    }
    nodes
}

/// `/sys/dev/block/MAJOR:MINOR`, a link to the device's sysfs directory.
pub(crate) fn sysfs_dir(major: u32, minor: u32) -> PathBuf {
    PathBuf::from(format!("/sys/dev/block/{major}:{minor}"))
}

fn list_dir(dir: &Path) -> Vec<String> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = rd
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    names.sort();
    names
}

/// Filesystem type of the mount whose device number is `major:minor`
/// (the `st_dev` of any file on it), from `/proc/self/mountinfo`.
pub fn fstype_of(major: u32, minor: u32) -> Option<String> {
    let text = fs::read_to_string("/proc/self/mountinfo").ok()?;
    parse_mountinfo(&text)
        .into_iter()
        .find(|m| (m.major, m.minor) == (major, minor))
        .map(|m| m.fstype)
}
