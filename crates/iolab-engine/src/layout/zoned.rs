//! Real zoned block devices (host-aware or host-managed, SMR disks and ZNS
//! namespaces): iolab emulates zones over regular files and conventional
//! devices (`zonemode=zbd`), but does not read a device's zones
//! (BLKREPORTZONE) or reset them, so it refuses a zoned device for
//! zonemode=zbd and for writes rather than pretend: a write off a write
//! pointer fails there, and the emulated write pointers would be wrong.

use std::path::Path;

use super::mounts;
use crate::EngineError;

/// The model in `queue/zoned` of the device `major:minor` (or of the disk
/// a partition belongs to): `none`, `host-aware` or `host-managed`.
pub(super) fn zoned_model(major: u32, minor: u32) -> Option<String> {
    let dir = mounts::sysfs_dir(major, minor);
    [dir.join("queue/zoned"), dir.join("../queue/zoned")]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .map(|s| s.trim().to_string())
}

/// The refusal for a job on `path` whose device reports `model`.
pub(super) fn check(
    path: &Path,
    model: Option<&str>,
    zbd: bool,
    writes: bool,
) -> Result<(), EngineError> {
    let Some(model) = model.filter(|m| *m != "none") else {
        return Ok(());
    };
    if !zbd && !writes {
        return Ok(());
    }
    Err(EngineError::File {
        path: path.to_path_buf(),
        reason: format!(
            "is a zoned block device ({model}); iolab emulates zones (zonemode=zbd) on regular \
             files and conventional devices only and does not read device zone reports \
             (BLKREPORTZONE): use fio for this device, or a regular file"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zoned_devices_are_refused_for_zbd_and_writes() {
        let p = Path::new("/dev/sdz");
        for model in ["host-managed", "host-aware"] {
            let e = check(p, Some(model), true, false).unwrap_err().to_string();
            assert!(e.contains("/dev/sdz") && e.contains(model), "{e}");
            assert!(check(p, Some(model), false, true).is_err());
            assert!(
                check(p, Some(model), false, false).is_ok(),
                "reading is harmless"
            );
        }
        assert!(check(p, Some("none"), true, true).is_ok());
        assert!(check(p, None, true, true).is_ok());
    }
}
