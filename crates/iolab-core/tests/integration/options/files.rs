//! nrfiles, filesize and filename_format: the files each worker gets, the
//! size each is used for, and the refusals with their messages.

use std::path::PathBuf;

use super::{err, prep};

#[test]
fn default_names_are_fios_jobname_jobnum_filenum() {
    let j = prep(&["size=12k", "nrfiles=3", "directory=/d", "numjobs=2"]);
    assert_eq!(
        j.files_for_worker(1),
        ["/d/t.1.0", "/d/t.1.1", "/d/t.1.2"].map(PathBuf::from)
    );
    // size is split equally, as in fio.
    assert_eq!(
        (0..3).map(|k| j.file_len(k, 3)).collect::<Vec<_>>(),
        [Some(4096); 3]
    );
}

#[test]
fn filename_format_tokens_are_replaced() {
    let j = prep(&[
        "size=8k",
        "nrfiles=2",
        "filename_format=$clientuid$jobname-w$jobnum-f$filenum.dat",
        "numjobs=2",
    ]);
    assert_eq!(
        j.files_for_worker(1),
        ["./t-w1-f0.dat", "./t-w1-f1.dat"].map(PathBuf::from)
    );
}

#[test]
fn fixed_filesize_sets_each_file_and_the_total() {
    let j = prep(&["filesize=64k", "nrfiles=3"]);
    assert_eq!(j.files.sizes_bytes, [65536; 3]);
    assert_eq!(j.size, Some(3 * 65536));
    assert_eq!(j.file_len(2, 3), Some(65536));
}

#[test]
fn size_below_the_files_total_is_the_amount_of_io_as_in_fio() {
    let j = prep(&["filesize=64k", "nrfiles=2", "size=16k"]);
    assert_eq!(j.size, Some(128 * 1024), "the region is the whole files");
    assert_eq!(j.amounts.io_size, Some(16 * 1024), "size is the I/O done");
}

#[test]
fn filesize_range_is_drawn_in_range_aligned_and_seeded() {
    let a = prep(&["filesize=10k-1m", "nrfiles=50", "bs=4k"]);
    let b = prep(&["filesize=10k-1m", "nrfiles=50", "bs=4k"]);
    let c = prep(&["filesize=10k-1m", "nrfiles=50", "bs=4k", "randseed=7"]);
    assert_eq!(
        a.files.sizes_bytes, b.files.sizes_bytes,
        "same seed, same sizes"
    );
    assert_ne!(
        a.files.sizes_bytes, c.files.sizes_bytes,
        "another seed, other sizes"
    );
    for s in &a.files.sizes_bytes {
        assert!(
            (12 * 1024..=1024 * 1024).contains(s) && s % 4096 == 0,
            "{s}"
        );
    }
    assert_eq!(a.size, Some(a.files.sizes_bytes.iter().sum()));
}

/// fio 3.33 (files it created): `nrfiles` below the number of names uses
/// the first `nrfiles`; above it, the names listed.
#[test]
fn nrfiles_beside_a_filename_list_follows_fio() {
    let one = prep(&["filename=/a", "nrfiles=3", "size=3m"]);
    assert_eq!(one.filenames, [std::path::PathBuf::from("/a")]);
    assert_eq!((one.files.nrfiles, one.size), (1, Some(3 << 20)));
    assert!(
        one.warnings.iter().any(|w| w.contains("uses those 1")),
        "{:?}",
        one.warnings
    );
    let two = prep(&["filename=/a:/b:/c", "nrfiles=2", "size=3m"]);
    assert_eq!(two.filenames, ["/a", "/b"].map(std::path::PathBuf::from));
    assert!(
        two.warnings.iter().any(|w| w.contains("uses the first 2")),
        "{:?}",
        two.warnings
    );
    let all = prep(&["filename=/a:/b:/c", "size=3m"]);
    assert_eq!((all.filenames.len(), all.files.nrfiles), (3, 3));
    assert!(all.warnings.is_empty(), "{:?}", all.warnings);
}

#[test]
fn refusals_name_the_option() {
    assert!(err(&["size=8k", "filename_format=sub/$jobname"]).contains("no '/'"));
    assert!(err(&["filesize=2k", "bs=4k"]).contains("smaller than the largest block size"));
    assert!(err(&["nrfiles=0", "size=8k"]).contains("'nrfiles'"));
}

#[test]
fn a_format_without_filenum_opens_one_file_nrfiles_times_as_fio_does() {
    let j = prep(&[
        "size=16k",
        "nrfiles=4",
        "filename_format=file$jobnum",
        "numjobs=2",
    ]);
    assert_eq!(j.files_for_worker(1), vec![PathBuf::from("./file1"); 4]);
    // Each open is its own region of size/nrfiles from the start of the file.
    assert_eq!(
        (0..4).map(|k| j.file_len(k, 4)).collect::<Vec<_>>(),
        [Some(4096); 4]
    );
    assert!(
        j.warnings
            .iter()
            .any(|w| w.contains("no $filenum") && w.contains("opened 4 times")),
        "{:?}",
        j.warnings
    );
}
