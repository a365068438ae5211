//! Shared helpers: a PreparedJob with fio's defaults, file readers, and
//! guards that unmount / detach what a test mounted or attached.

use std::path::{Path, PathBuf};
use std::process::Command;

use iolab_core::job::{
    BsSpec, CpusAllowedPolicy, IoEngine, JobSpec, Pattern, PreparedJob, RandomDistribution,
    RateProcess, RwMix, SyncMode, DEFAULT_PERCENTILES,
};
use iolab_engine::layout::{self, Layout};
use iolab_engine::EngineError;

/// A 4 KiB random job on `files` (shared by all clones), `read_pct` reads.
pub fn job(name: &str, files: &[&Path], read_pct: u32, size: Option<u64>) -> PreparedJob {
    PreparedJob {
        name: name.into(),
        filenames: files.iter().map(|p| p.to_path_buf()).collect(),
        shared_files: true,
        directory: None,
        size,
        offset: 0,
        rw: RwMix {
            pattern: Pattern::Random,
            read_pct,
        },
        bs: [BsSpec::Fixed(4096), BsSpec::Fixed(4096)],
        blockalign: [4096, 4096],
        iodepth: 1,
        iodepth_batch_submit: 1,
        iodepth_batch_complete_min: 1,
        iodepth_batch_complete_max: 1,
        numjobs: 1,
        runtime_ns: None,
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
        rate_bytes_per_s: [None, None],
        rate_iops: [None, None],
        rate_process: RateProcess::Linear,
        thinktime_ns: 0,
        cpus_allowed: None,
        cpus_allowed_policy: CpusAllowedPolicy::Shared,
        randseed: 0,
        randrepeat: true,
        norandommap: false,
        random_distribution: RandomDistribution::Uniform,
        percentile_list: DEFAULT_PERCENTILES.to_vec(),
        group_reporting: false,
        stonewall: false,
        warnings: Vec::new(),
        spec: JobSpec::new(name),
    }
}

pub const MIB: u64 = 1 << 20;

/// `prepare` without progress reporting.
pub fn prepare(jobs: &[PreparedJob], allow_overwrite: bool) -> Result<Layout, EngineError> {
    layout::prepare(jobs, allow_overwrite, &mut |_, _, _| {})
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

/// Run a command; `Err(stderr)` when it cannot run or fails.
pub fn sh(cmd: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .map_err(|e| format!("{cmd}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A filesystem mounted for one test; unmounted when dropped.
pub struct Mount {
    pub dir: tempfile::TempDir,
}

impl Mount {
    /// `mount -t fstype -o opts none <tempdir>`; `None` (and a message on
    /// stderr) where this process may not mount.
    pub fn new(fstype: &str, opts: &str) -> Option<Mount> {
        Mount::run(&["-t", fstype, "-o", opts, "none"])
    }

    /// `mount <device> <tempdir>`.
    pub fn device(dev: &Path) -> Option<Mount> {
        Mount::run(&[dev.to_str().unwrap()])
    }

    fn run(args: &[&str]) -> Option<Mount> {
        let dir = tempfile::tempdir().unwrap();
        let mut all = args.to_vec();
        all.push(dir.path().to_str().unwrap());
        match sh("mount", &all) {
            Ok(_) => Some(Mount { dir }),
            Err(e) => {
                eprintln!("SKIP: {e}; this test needs root");
                None
            }
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = sh("umount", &[self.dir.path().to_str().unwrap()]);
    }
}

/// A loop device over a sparse image file; detached when dropped.
pub struct LoopDev {
    pub dev: PathBuf,
    pub image: tempfile::NamedTempFile,
}

impl LoopDev {
    /// `None` (and a message) where losetup cannot attach devices here.
    pub fn new(bytes: u64) -> Option<LoopDev> {
        let image = tempfile::NamedTempFile::new().unwrap();
        image.as_file().set_len(bytes).unwrap();
        match sh("losetup", &["-f", "--show", image.path().to_str().unwrap()]) {
            Ok(dev) => Some(LoopDev {
                dev: PathBuf::from(dev),
                image,
            }),
            Err(e) => {
                eprintln!(
                    "SKIP: cannot attach a loop device ({e}); this test needs root and /dev/loop*"
                );
                None
            }
        }
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = sh("losetup", &["-d", self.dev.to_str().unwrap()]);
    }
}
