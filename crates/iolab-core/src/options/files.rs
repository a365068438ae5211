//! Checks of a job's file options (part of `finish`): `nrfiles` and
//! `filename_format` against `filename`, and `filesize` resolved into one
//! size per file, which then decides `size` (their sum); a smaller `size`
//! given with it is the amount of I/O (io_size), as in fio.

use super::draft::Draft;
use super::DEFAULT_RANDSEED;
use crate::error::JobError;
use crate::job::{draw_sizes, IoDir, RwMix};

/// `filenames`: the files `filename=` lists (empty when iolab names them).
/// fio 3.33's rule for `nrfiles` beside `filename=` (checked by the files
/// it creates): the job uses the first `nrfiles` names when the list is
/// longer, and only the names listed when it is shorter — `nrfiles=3` with
/// one name is one file holding the whole size. iolab does the same and
/// says so.
pub(super) fn resolve(
    d: &mut Draft,
    rw: RwMix,
    filenames: &mut Vec<std::path::PathBuf>,
) -> Result<(), JobError> {
    let listed = filenames.len();
    if listed > 0 && d.explicit.contains("nrfiles") && d.files.nrfiles as usize != listed {
        let n = d.files.nrfiles;
        if (n as usize) < listed {
            filenames.truncate(n as usize);
            d.warnings.push(format!(
                "nrfiles={n} with {listed} names in filename=: the job uses the first {n} \
                 (as fio does)"
            ));
        } else {
            d.warnings.push(format!(
                "nrfiles={n} but filename= names {listed} file(s): the job uses those {listed} \
                 (as fio does; the size is spread over them)"
            ));
        }
    }
    let named = filenames.len();
    if named > 0 {
        // The prepared job says how many files it uses.
        d.files.nrfiles = named as u32;
        if d.explicit.contains("filename_format") {
            d.warnings
                .push("filename_format has no effect: filename= names the files".into());
        }
    } else {
        check_format(&d.files.filename_format)?;
        if d.files.nrfiles > 1 && !d.files.filename_format.contains("$filenum") {
            // fio adds the one name nrfiles times (init.c), so a worker
            // opens the same file that many times, each open its own
            // region of size/nrfiles from the start. iolab does the same.
            d.warnings.push(format!(
                "filename_format={} has no $filenum: each worker's {} files are one file, \
                 opened {} times (as fio does)",
                d.files.filename_format, d.files.nrfiles, d.files.nrfiles
            ));
        }
    }
    let Some((lo, hi)) = d.files.filesize else {
        return Ok(());
    };
    let n = if named > 0 {
        named as u32
    } else {
        d.files.nrfiles
    };
    let largest = IoDir::ALL
        .into_iter()
        .filter(|dir| rw.uses_slot(*dir))
        .map(|dir| d.bs[dir as usize].max())
        .max()
        .unwrap_or(0);
    if lo < largest {
        return Err(JobError::InvalidValue {
            option: "filesize".into(),
            value: format!("{lo}"),
            reason: format!(
                "a file of {lo} bytes is smaller than the largest block size ({largest} bytes)"
            ),
        });
    }
    let grain = IoDir::ALL
        .into_iter()
        .filter(|dir| rw.uses_slot(*dir))
        .map(|dir| d.bs[dir as usize].min())
        .min()
        .unwrap_or(1);
    let seed = d.randseed.unwrap_or(DEFAULT_RANDSEED);
    let sizes = draw_sizes(lo, hi, n, grain, seed);
    let total: u64 = sizes.iter().sum();
    match d.size {
        // fio: the files are filesize large and `size` is how much I/O the
        // job does over them — iolab's io_size.
        Some(size) if size < total => {
            d.amounts.io_size.get_or_insert(size);
        }
        Some(size) if size > total => d.warnings.push(format!(
            "size={size} is more than the files' total; using {total} bytes (filesize over \
             {n} file(s)), as fio does"
        )),
        _ => {}
    }
    d.size = Some(total);
    d.files.sizes_bytes = sizes;
    Ok(())
}

/// The format must give a file name in `directory` (iolab creates files,
/// not directories).
fn check_format(format: &str) -> Result<(), JobError> {
    let bad = |reason: &str| JobError::InvalidValue {
        option: "filename_format".into(),
        value: format.into(),
        reason: reason.into(),
    };
    if format.contains('/') {
        return Err(bad(
            "must name a file inside directory= (no '/'); set directory= for the place",
        ));
    }
    if format.replace("$clientuid", "").is_empty() {
        return Err(bad("gives an empty file name"));
    }
    Ok(())
}
