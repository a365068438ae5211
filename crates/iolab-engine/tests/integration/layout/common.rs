//! Shared helpers: a job prepared from fio options, `prepare`, and file
//! readers. What tests do to the system (commands, mounts, loop devices)
//! is in `system`.

use std::path::Path;

use iolab_core::job::{JobSpec, PreparedJob};
use iolab_engine::layout::{self, Layout};
use iolab_engine::EngineError;

use super::system;

/// A 4 KiB random psync job on `files` (shared by all clones), `read_pct`
/// reads, prepared from fio options as a user's job is. Without `files`
/// the job's own files are `name.N.0` in the current directory.
pub fn job(name: &str, files: &[&Path], read_pct: u32, size: Option<u64>) -> PreparedJob {
    let mut spec = JobSpec::new(name);
    if !files.is_empty() {
        // fio's list separator is ':'; one inside a name is written '\:'.
        let names: Vec<String> = files
            .iter()
            .map(|p| p.to_str().unwrap().replace(':', "\\:"))
            .collect();
        spec = spec.opt("filename", Some(&names.join(":")));
    }
    spec = match read_pct {
        100 => spec.opt("rw", Some("randread")),
        0 => spec.opt("rw", Some("randwrite")),
        pct => spec
            .opt("rw", Some("randrw"))
            .opt("rwmixread", Some(&pct.to_string())),
    };
    if let Some(bytes) = size {
        spec = spec.opt("size", Some(&bytes.to_string()));
    }
    spec.prepare().unwrap_or_else(|e| panic!("job {name}: {e}"))
}

pub const MIB: u64 = 1 << 20;

/// `prepare` without progress reporting. It may start `blkid` and opens
/// devices exclusively for a moment, so it runs under the fork lock (see
/// `system`).
pub fn prepare(jobs: &[PreparedJob], allow_overwrite: bool) -> Result<Layout, EngineError> {
    system::forking(|| layout::prepare(jobs, allow_overwrite, &mut |_, _, _| {}))
}

pub fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// Whether the file carries iolab's xattr.
pub fn has_mark(path: &Path) -> bool {
    let f = std::fs::File::open(path).unwrap();
    let mut buf = [0u8; 128];
    rustix::fs::fgetxattr(&f, layout::CREATED_XATTR, &mut buf).is_ok()
}
