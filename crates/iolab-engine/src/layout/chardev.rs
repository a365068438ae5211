//! `/dev/null` and `/dev/zero`, the two character devices fio's job files
//! name (steadystate.fio writes to one and reads from the other): a sink
//! that takes every write and a source of zeros for every read. Nothing is
//! laid out or marked; the region is what `size=` says (these devices have
//! no size). Only reading `/dev/null` (it returns end of file at once; a
//! read of a mix fails at run time with "0 bytes transferred") and
//! O_DIRECT (neither device supports it) are refused by name, as is every
//! other character device.

use std::path::Path;

use super::{plan::FileNeed, Action, Checked, FileKind};
use crate::EngineError;

/// The check of a character device at `need.path`.
pub(super) fn inspect(need: &FileNeed) -> Result<Checked, EngineError> {
    let path = &need.path;
    let refuse = |reason: String| {
        Err(EngineError::File {
            path: path.clone(),
            reason,
        })
    };
    let sink = path == Path::new("/dev/null");
    if !sink && path != Path::new("/dev/zero") {
        return refuse(
            "is a character device; iolab works on regular files, block devices, /dev/null and /dev/zero".into(),
        );
    }
    let Some(size) = need.sized_bytes.filter(|_| need.unsized_offset.is_none()) else {
        return refuse(
            "is a character device without a size: set size= (the bytes of I/O per pass)".into(),
        );
    };
    if need.direct {
        return refuse("does not support O_DIRECT: use direct=0".into());
    }
    if sink && !need.writes {
        return refuse(
            "returns nothing to reads (end of file at once): read /dev/zero instead".into(),
        );
    }
    let note = format!(
        "{}: {} (character device), region of {size} bytes from size=",
        path.display(),
        if sink {
            "writes are discarded"
        } else {
            "reads return zeros"
        }
    );
    Ok(Checked {
        need: need.clone(),
        kind: FileKind::CharDevice,
        size_bytes: size,
        created_by_iolab: false,
        action: Action::Keep,
        direct_align: None,
        growth: None,
        note,
    })
}
