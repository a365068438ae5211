//! Option rows for the files iolab creates for a job and how the job's
//! amount is spread over them (fio's nrfiles, filesize, filename_format).
//! Part of the one option table (see `table`); checked in `files`.

use super::val::put;
use super::DefaultValue::{Note, Value};
use super::OptionDef;
use super::OptionKind::*;
use crate::job::parse_file_service;
use crate::job::Preallocate;
use crate::units;

pub(super) static FILE_OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "nrfiles",
        set: |d, v| put(&mut d.files.nrfiles, v.u32_min(1)),
        aliases: &["nr_files"],
        kind: Int,
        default: Value("1"),
        unit: "files",
        help: "Files per worker that iolab creates in directory= (when no filename= is \
               given); size is split equally among them, as in fio. Beside a filename= \
               list, as fio 3.33: the first nrfiles names, or all names when there are \
               fewer (nrfiles=3 with one name is one file), with a note.",
    },
    OptionDef {
        name: "filesize",
        set: |d, v| {
            let (lo, hi) = if v.text().contains('-') {
                v.wrap(units::parse_size_range(v.text(), v.kb_base))?
            } else {
                let n = v.size()?;
                (n, n)
            };
            if lo == 0 {
                return Err(v.invalid("must be greater than 0"));
            }
            put(&mut d.files.filesize, Ok(Some((lo, hi))))
        },
        aliases: &[],
        kind: Size,
        default: Note("size split equally among the files"),
        unit: "bytes",
        help: "Size of each file; a range lo-hi draws each file's size in it (from the \
               job's seed, rounded down to the block size). The region is the whole files; a \
               smaller size= is the amount of I/O over them (as io_size), as in fio.",
    },
    OptionDef {
        name: "filename_format",
        set: |d, v| {
            put(
                &mut d.files.filename_format,
                v.nonempty_text().map(str::to_string),
            )
        },
        aliases: &[],
        kind: Text,
        default: Value("$jobname.$jobnum.$filenum"),
        unit: "",
        help: "Names of the files iolab creates: $jobname, $jobnum (the worker), $filenum \
               (the file) and $clientuid (empty: iolab runs locally) are replaced.",
    },
    OptionDef {
        name: "file_service_type",
        set: |d, v| {
            let (kind, batch) = v.wrap(parse_file_service(v.text()))?;
            d.files.service = kind;
            d.files.service_batch = batch;
            Ok(())
        },
        aliases: &[],
        kind: Text,
        default: Value("roundrobin"),
        unit: "",
        help: "How a worker moves between its files: roundrobin (in turn), random (a file \
               with bytes left, drawn at random) or sequential (each to its end); :N does \
               N I/Os on a file before moving on (roundrobin:4).",
    },
    OptionDef {
        name: "unlink",
        set: |d, v| put(&mut d.files.unlink, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "Remove the job's files when the run ends: only files iolab created (never \
               a file it found); the others are kept and a note says so.",
    },
    OptionDef {
        name: "create_fsync",
        set: |d, v| put(&mut d.files.create_fsync, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("1"),
        unit: "",
        help: "Flush a file's data to the device (fdatasync) once iolab has laid it out, \
               before its cached pages are dropped, as fio's default does. 0: writeback \
               flushes it during the run (whose I/O then shares the device with it), and \
               the laid-out pages stay cached, dirty, so buffered reads may find them.",
    },
    OptionDef {
        name: "fallocate",
        set: |d, v| put(&mut d.files.fallocate, v.wrap(Preallocate::parse(v.text()))),
        aliases: &[],
        kind: Text,
        default: Value("native"),
        unit: "",
        help: "How the blocks of a file iolab lays out are reserved before it is filled: \
               native (fallocate(2), skipped where the filesystem lacks it), posix (an error \
               where it cannot), keep (FALLOC_FL_KEEP_SIZE), truncate (ftruncate: sparse) or \
               none (0); 1 is posix. iolab fills every byte either way.",
    },
];
