//! What the tests do to the system — commands, mounts, loop devices, swap,
//! a device's read-only flag, a file's immutable flag — each undone by a
//! guard when it is dropped, so also when a test panics; and the lock that
//! keeps device tests from colliding with the other tests of this binary.
//!
//! Why a lock: a block device's exclusive claim (`O_EXCL`, which the
//! engine's safety check tries and one test holds on purpose) belongs to
//! the open file, and a process that forks copies its open files into the
//! child until the child execs. So while any other test thread starts a
//! command (`mount`, `losetup`, or `blkid` inside the engine's `prepare`),
//! a claim this thread just closed can live on for a moment in that child:
//! the next exclusive open fails with EBUSY (the flaky "the kernel reports
//! it busy" after the claim was dropped), or `mkfs`/`mkswap` fail and the
//! test skips its second half. Hence:
//! - [`sh`] and `common::prepare` (anything that forks or claims) take the
//!   lock shared: they still run side by side;
//! - a [`LoopDev`] takes it exclusively for its whole life: a device test
//!   runs alone, and no other thread forks while it holds device files
//!   open. Its own commands skip the lock (it is this thread's already).
//!
//! Loop devices come from `losetup -f` (the kernel hands each caller a free
//! one), so test binaries running at the same time never share one.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{PoisonError, RwLock, RwLockWriteGuard};

static FORKS: RwLock<()> = RwLock::new(());

thread_local! {
    /// This thread holds [`FORKS`] exclusively (through a [`LoopDev`]).
    static EXCLUSIVE: Cell<bool> = const { Cell::new(false) };
}

/// Run `f` under the fork lock, shared (unless this thread holds it).
pub fn forking<T>(f: impl FnOnce() -> T) -> T {
    if EXCLUSIVE.get() {
        return f();
    }
    // A panic under the lock only poisons it; the lock guards no data.
    let _shared = FORKS.read().unwrap_or_else(PoisonError::into_inner);
    f()
}

/// [`FORKS`] held exclusively by this thread until dropped.
struct Exclusive {
    _guard: RwLockWriteGuard<'static, ()>,
}

impl Exclusive {
    fn take() -> Exclusive {
        // The lock is not reentrant: a second take on this thread would hang.
        assert!(!EXCLUSIVE.get(), "one loop device per test");
        let guard = FORKS.write().unwrap_or_else(PoisonError::into_inner);
        EXCLUSIVE.set(true);
        Exclusive { _guard: guard }
    }
}

impl Drop for Exclusive {
    fn drop(&mut self) {
        EXCLUSIVE.set(false);
    }
}

/// Run a command; `Err(stderr)` when it cannot run or fails.
pub fn sh(cmd: &str, args: &[&str]) -> Result<String, String> {
    let out =
        forking(|| Command::new(cmd).args(args).output()).map_err(|e| format!("{cmd}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A test that cannot do what it needs here (not root, no loop devices):
/// under `CI=true` that fails the test — CI runs every device-safety test,
/// none may pass by returning early — elsewhere it prints `SKIP: reason`
/// and the caller returns.
pub fn skip(reason: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("CI=true, so this test must run, not skip: {reason}");
    }
    eprintln!("SKIP: {reason}");
}

/// [`sh`], or `None` after [`skip`] (`the error; why`) when it fails.
fn sh_or_skip(cmd: &str, args: &[&str], why: &str) -> Option<String> {
    sh(cmd, args).map_err(|e| skip(&format!("{e}; {why}"))).ok()
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
        sh_or_skip("mount", &all, "this test needs root")?;
        Some(Mount { dir })
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

/// A loop device over a sparse image file, for one test; detached when
/// dropped. Holds the fork lock exclusively meanwhile (see the module doc),
/// so a test makes one at most. Guards over the device (a [`Mount`],
/// [`Swap`], [`ReadOnly`]) are made after it and so dropped before it.
pub struct LoopDev {
    pub dev: PathBuf,
    pub image: tempfile::NamedTempFile,
    // Dropped last: the device is detached while no other thread forks.
    _exclusive: Exclusive,
}

impl LoopDev {
    /// `None` (and a message) where losetup cannot attach devices here.
    pub fn new(bytes: u64) -> Option<LoopDev> {
        let exclusive = Exclusive::take();
        let image = tempfile::NamedTempFile::new().unwrap();
        image.as_file().set_len(bytes).unwrap();
        let args = ["-f", "--show", image.path().to_str().unwrap()];
        let dev = sh_or_skip("losetup", &args, "this test needs root and /dev/loop*")?;
        let lo = LoopDev {
            dev: PathBuf::from(dev),
            image,
            _exclusive: exclusive,
        };
        // A device's read-only flag outlives its backing file: a run killed
        // before `ReadOnly` was dropped leaves it set for the next user.
        sh("blockdev", &["--setrw", lo.path_str()]).expect("reset the read-only flag");
        Some(lo)
    }

    pub fn path_str(&self) -> &str {
        self.dev.to_str().unwrap()
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = sh("losetup", &["-d", self.path_str()]);
    }
}

/// A device in use as swap for one test; swapped off when dropped.
pub struct Swap<'a>(&'a LoopDev);

impl<'a> Swap<'a> {
    /// `mkswap` and `swapon`; `None` (and a message) where that fails.
    pub fn on(lo: &'a LoopDev) -> Option<Swap<'a>> {
        sh_or_skip("mkswap", &[lo.path_str()], "this test needs mkswap")?;
        sh_or_skip("swapon", &[lo.path_str()], "this test needs swap")?;
        Some(Swap(lo))
    }
}

impl Drop for Swap<'_> {
    fn drop(&mut self) {
        let _ = sh("swapoff", &[self.0.path_str()]);
    }
}

/// A device's read-only flag set for one test; cleared when dropped.
pub struct ReadOnly<'a>(&'a LoopDev);

impl<'a> ReadOnly<'a> {
    /// `blockdev --setro`; `None` (and a message) where that fails.
    pub fn set(lo: &'a LoopDev) -> Option<ReadOnly<'a>> {
        sh_or_skip(
            "blockdev",
            &["--setro", lo.path_str()],
            "needs blockdev --setro",
        )?;
        Some(ReadOnly(lo))
    }
}

impl Drop for ReadOnly<'_> {
    fn drop(&mut self) {
        let _ = sh("blockdev", &["--setrw", self.0.path_str()]);
    }
}

/// A file made immutable (`chattr +i`) for one test; made mutable again
/// when dropped, so its temporary directory can be removed.
pub struct Immutable<'a>(&'a Path);

impl<'a> Immutable<'a> {
    /// `None` (and a message) where the filesystem has no such flag.
    pub fn set(path: &'a Path) -> Option<Immutable<'a>> {
        // A filesystem property, not a missing privilege: skipped even under CI.
        sh("chattr", &["+i", path.to_str().unwrap()])
            .map_err(|e| eprintln!("SKIP: {e}; chattr +i is not possible here"))
            .ok()?;
        Some(Immutable(path))
    }
}

impl Drop for Immutable<'_> {
    fn drop(&mut self) {
        let _ = sh("chattr", &["-i", self.0.to_str().unwrap()]);
    }
}
