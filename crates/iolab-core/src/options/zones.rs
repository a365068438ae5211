//! Checks of the zone options (part of `finish`), with fio's rules
//! (`fixup_options` in fio's init.c, learnt from, not copied): `zonesize`
//! alone means strided zones, `zonemode=none` with a `zonesize` is an
//! error, `zonerange` defaults to `zonesize`, strided zones need one file,
//! and zbd zones need `zonerange = zonesize`, no `zoneskip` and blocks that
//! fit in a zone. `fill_device` needs a job that writes.

use super::draft::Draft;
use crate::error::JobError;
use crate::job::{IoDir, Pattern, RandomDistribution, RwMix, ZoneMode};

/// `size` and `offset` given as counts of zones (`8z`), as fio writes them.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct ZoneCounts {
    pub size: Option<u64>,
    pub offset: Option<u64>,
}

/// Turn zone counts into bytes: they need `zonesize`.
pub(super) fn resolve_counts(d: &mut Draft) -> Result<(), JobError> {
    let ZoneCounts { size, offset } = d.zones_given;
    if size.is_none() && offset.is_none() {
        return Ok(());
    }
    let zone = d.zones.size_bytes;
    let bytes = |name: &str, n: u64| {
        if zone == 0 {
            return Err(conflict(format!(
                "{name}={n}z counts zones, which needs zonesize; set zonesize or give {name} in bytes"
            )));
        }
        n.checked_mul(zone)
            .ok_or_else(|| conflict(format!("{name}={n}z is more than 2^64 bytes")))
    };
    if let Some(n) = size {
        if n == 0 {
            return Err(conflict("size=0z: size must be greater than 0"));
        }
        d.size = Some(bytes("size", n)?);
    }
    if let Some(n) = offset {
        d.offset = bytes("offset", n)?;
    }
    Ok(())
}

fn conflict(msg: impl Into<String>) -> JobError {
    JobError::Conflict(msg.into())
}

/// `named`: how many files `filename=` lists (0 when iolab names them).
pub(super) fn check(d: &mut Draft, rw: RwMix, named: usize) -> Result<(), JobError> {
    fill(d, rw)?;
    if !d.zones.create_serialize {
        if d.zones.mode == ZoneMode::Zbd {
            return Err(conflict(
                "zonemode=zbd and create_serialize=0 do not go together (as in fio); drop \
                 create_serialize",
            ));
        }
        d.warnings.push(
            "create_serialize=0 has no effect: iolab lays out the files one at a time, \
             before the run"
                .into(),
        );
    }
    let z = &mut d.zones;
    let mode_given = d.explicit.contains("zonemode");
    let size_given = d.explicit.contains("zonesize");
    if !mode_given && size_given {
        z.mode = ZoneMode::Strided;
    }
    match z.mode {
        ZoneMode::None if size_given => Err(conflict(
            "zonemode=none and zonesize do not go together (as in fio); drop zonesize, or set \
             zonemode=strided or zbd",
        )),
        ZoneMode::None => {
            note_unused(d, &["zonerange", "zoneskip"], "zonemode=strided");
            note_zbd_only(d);
            Ok(())
        }
        ZoneMode::Strided => strided(d, named),
        ZoneMode::Zbd => zbd(d, rw),
    }
}

fn fill(d: &mut Draft, rw: RwMix) -> Result<(), JobError> {
    if d.zones.fill_device && rw.does(IoDir::Read) {
        return Err(conflict(
            "fill_device needs a job that only writes (fio fills the file system first, \
             then reads; iolab does not): run a write job with fill_device=1, then read",
        ));
    }
    Ok(())
}

fn note_unused(d: &mut Draft, names: &[&str], needs: &str) {
    for name in names {
        if d.explicit.contains(name) {
            d.warnings
                .push(format!("{name} has no effect without {needs}"));
        }
    }
}

fn note_zbd_only(d: &mut Draft) {
    note_unused(
        d,
        &[
            "zonecapacity",
            "read_beyond_wp",
            "max_open_zones",
            "job_max_open_zones",
            "ignore_zone_limits",
            "zone_reset_threshold",
            "zone_reset_frequency",
        ],
        "zonemode=zbd",
    );
}

fn strided(d: &mut Draft, named: usize) -> Result<(), JobError> {
    let z = &mut d.zones;
    if z.size_bytes == 0 {
        return Err(conflict(
            "zonemode=strided needs zonesize (bytes moved in a zone before moving on), e.g. \
             zonesize=256m",
        ));
    }
    if z.range_bytes == 0 {
        z.range_bytes = z.size_bytes;
    }
    let files = if named > 0 {
        named
    } else {
        d.files.nrfiles as usize
    };
    if files > 1 {
        // fio turns strided zones off with more than one open file.
        d.warnings.push(format!(
            "zonemode=strided has no effect with {files} files (as in fio): zones apply to \
             one file"
        ));
        d.zones.mode = ZoneMode::None;
        return Ok(());
    }
    if d.pattern == Pattern::Random && d.distribution != RandomDistribution::Uniform {
        return Err(conflict(
            "zonemode=strided draws random offsets uniformly inside the zone; drop \
             random_distribution or zonemode",
        ));
    }
    note_zbd_only(d);
    Ok(())
}

fn zbd(d: &mut Draft, rw: RwMix) -> Result<(), JobError> {
    let z = &mut d.zones;
    if z.size_bytes == 0 {
        return Err(conflict(
            "zonemode=zbd needs zonesize (iolab emulates the zones over a regular file), \
             e.g. zonesize=256m",
        ));
    }
    let size = z.size_bytes;
    if z.range_bytes != 0 && z.range_bytes != size {
        return Err(conflict(format!(
            "zonemode=zbd needs zonerange equal to zonesize ({size} bytes), as in fio; drop \
             zonerange"
        )));
    }
    z.range_bytes = size;
    if z.skip_bytes != 0 {
        return Err(conflict(
            "zonemode=zbd does not skip: zoneskip must be 0 (as in fio); drop zoneskip",
        ));
    }
    if z.capacity_bytes == 0 {
        z.capacity_bytes = size;
    }
    if z.capacity_bytes > size {
        return Err(conflict(format!(
            "zonecapacity ({} bytes) is larger than zonesize ({size} bytes)",
            z.capacity_bytes
        )));
    }
    let ignore = z.ignore_zone_limits;
    for dir in IoDir::ALL.into_iter().filter(|dir| rw.uses_slot(*dir)) {
        let bs = d.bs[dir as usize].max();
        let cap = if dir == IoDir::Write {
            d.zones.capacity_bytes
        } else {
            size
        };
        if bs > cap {
            return Err(conflict(format!(
                "{} blocks of up to {bs} bytes do not fit in a zone of {cap} bytes \
                 (zonemode=zbd); use a smaller bs or a larger zonesize/zonecapacity",
                dir.name()
            )));
        }
    }
    if ignore {
        d.warnings.push(
            "ignore_zone_limits has no effect: iolab's emulated zones have no device \
             limit of open zones to ignore"
                .into(),
        );
    }
    if d.explicit.contains("zone_reset_frequency") && d.zones.reset_threshold == 0.0 {
        d.warnings.push(
            "zone_reset_frequency with zone_reset_threshold=0 resets zones from the first \
             write on (as in fio)"
                .into(),
        );
    }
    Ok(())
}
