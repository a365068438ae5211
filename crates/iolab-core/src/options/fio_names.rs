//! Names of fio options iolab does not accept, and the "unknown option"
//! error with its hint: advice for well-known fio options, "did you mean"
//! for misspellings of iolab's own (Damerau-Levenshtein distance, via
//! `strsim`).
//!
//! [`FIO_ONLY`] was taken from fio 3.33 (`fio --cmdhelp=all` plus the
//! `.. option::` entries of its HOWTO), minus the options iolab knows:
//! those of the table and those iolab's Python front takes before a job
//! reaches the engine (python/iolab/jobs/extras.py; tests/jobs/
//! test_option_surface.py checks that none of them is listed here).

use super::OPTIONS;
use crate::error::JobError;

/// fio options (3.33) that iolab does not support (yet).
pub(super) static FIO_ONLY: &[&str] = &[
    "allow_mounted_write",
    "bindname",
    "block_error_percentiles",
    "blocksize_unaligned",
    "bs_is_seq_rand",
    "bs_unaligned",
    "busy_poll",
    "busy_wait_polling",
    "bwavgtime",
    "cgroup",
    "cgroup_nodelete",
    "cgroup_weight",
    "chunk_size",
    "clientname",
    "clustername",
    "cmd_type",
    "cont",
    "cuda_io",
    "direct_write_to_pmem",
    "donorname",
    "exit_on_io_done",
    "experimental_verify",
    "file_append",
    "gid",
    "gpu_dev_ids",
    "grace_time",
    "gtod_cpu",
    "hdfsdirectory",
    "hipri_percentage",
    "hostname",
    "http_host",
    "http_mode",
    "http_pass",
    "http_s3_key",
    "http_s3_keyid",
    "http_s3_region",
    "http_s3_sse_customer_algorithm",
    "http_s3_sse_customer_key",
    "http_s3_storage_class",
    "http_swift_auth_token",
    "http_user",
    "http_verbose",
    "https",
    "inplace",
    "interface",
    "iomem_align",
    "iopsavgtime",
    "listen",
    "lockfile",
    "log_alternate_epoch",
    "log_alternate_epoch_clock_id",
    "log_compression",
    "log_compression_cpus",
    "log_entries",
    "log_store_compressed",
    "max_latency",
    "mem_align",
    "merge_blktrace_file",
    "merge_blktrace_iters",
    "merge_blktrace_scalars",
    "mss",
    "namenode",
    "nfs_url",
    "nodelay",
    "nowait",
    "numruns",
    "object_class",
    "offset_align",
    "opendir",
    "pingpong",
    "pool",
    "port",
    "prep",
    "profile",
    "program",
    "proto",
    "protocol",
    "rate_ignore_thinktime",
    "rbdname",
    "read_iolog_chunked",
    "readfua",
    "rw_sequencer",
    "serverip",
    "sg_write_mode",
    "skip_bad",
    "softrandommap",
    "stat_type",
    "stats",
    "std_redirect",
    "stream_id",
    "sync_file_range",
    "touch_objects",
    "ttl",
    "uid",
    "unique_filename",
    "unlink_each_loop",
    "userspace_reap",
    "verb",
    "verify_async_cpus",
    "verify_backlog_batch",
    "window_size",
    "write_barrier",
    "write_hint",
    "writefua",
    "xnvme_admin",
    "xnvme_async",
    "xnvme_dev_nsid",
    "xnvme_iovec",
    "xnvme_sync",
];

/// Specific advice for fio options people often carry over.
fn advice(name: &str) -> Option<&'static str> {
    Some(match name {
        "opendir" => "name the files with filename=a:b",
        _ => return None,
    })
}

/// The error for an option name iolab does not know.
pub(super) fn unknown_option(name: &str) -> JobError {
    let hint = if let Some(a) = advice(name) {
        format!(": fio option not supported by iolab yet ({a})")
    } else if FIO_ONLY.contains(&name) {
        ": fio option not supported by iolab yet".to_string()
    } else if let Some(close) = closest(name) {
        format!(": did you mean '{close}'?")
    } else {
        ": see `iolab options` for the options iolab knows".to_string()
    };
    JobError::UnknownOption {
        name: name.to_string(),
        hint,
    }
}

/// The known option name closest to `name`, if it is close enough to be a
/// slip (leading dashes and case are forgiven: `--BS` suggests `bs`).
fn closest(name: &str) -> Option<&'static str> {
    let wanted = name.trim_start_matches('-').to_ascii_lowercase();
    let limit = if wanted.len() <= 4 { 1 } else { 2 };
    OPTIONS
        .iter()
        .flat_map(|o| std::iter::once(&o.name).chain(o.aliases.iter()))
        .map(|known| (strsim::damerau_levenshtein(&wanted, known), *known))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, known)| known)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_only_names_are_not_iolab_options() {
        for name in FIO_ONLY {
            assert!(
                super::super::lookup(name).is_none(),
                "'{name}' is in the table and in FIO_ONLY"
            );
        }
    }
}
