//! The verify log's rules, step by step: a block is read back only once
//! the write that decides it has completed; the last write issued is the
//! one expected; reads of a mix are not checked; verify_write_sequence=0
//! expects any intact chunk.

use iolab_core::gen::IoUnit;
use iolab_core::job::{IoDir, JobSpec};

use super::super::dedupe::DedupePeer;
use super::DataState;

fn state(opts: &[&str]) -> DataState {
    let job = JobSpec::new("t")
        .args(["filename=/tmp/x", "size=1m", "bs=4k", "verify=crc32c"])
        .args(opts.iter().copied())
        .prepare()
        .unwrap();
    let who = DedupePeer {
        job: 0,
        global: None,
    };
    DataState::new(&job, 1, 1 << 20, who)
}

fn unit(dir: IoDir, offset: u64) -> IoUnit {
    IoUnit {
        dir,
        file: 0,
        offset,
        len: 4096,
    }
}

#[test]
fn a_block_is_read_back_only_after_its_last_write_completes() {
    let mut d = state(&["rw=randwrite", "verify_backlog=1"]);
    let x = unit(IoDir::Write, 8192);
    d.issued_write(x, 11);
    d.written(x, 11);
    // A second write to the block is issued and still in flight: reading
    // the block now would race it (the false mismatch this log prevents).
    d.issued_write(x, 22);
    assert_eq!(d.next_read(), None, "its write is in flight");
    // The first write's late completion changes nothing.
    d.written(x, 11);
    assert_eq!(d.next_read(), None);
    d.written(x, 22);
    assert_eq!(d.next_read(), Some(unit(IoDir::Read, 8192)));
    assert_eq!(d.read_seed(), Some(22), "the last write issued is expected");
    assert_eq!(d.next_read(), None, "read back once");
}

#[test]
fn verify_write_sequence_0_expects_any_intact_chunk() {
    let mut d = state(&[
        "rw=randwrite",
        "verify_backlog=1",
        "verify_write_sequence=0",
    ]);
    let x = unit(IoDir::Write, 0);
    d.issued_write(x, 7);
    d.written(x, 7);
    assert!(d.next_read().is_some());
    assert_eq!(d.read_seed(), Some(0));
}

#[test]
fn reads_of_a_mix_are_not_checked_but_its_writes_are_read_back() {
    let mut d = state(&["rw=randrw", "verify_backlog=2"]);
    let w = unit(IoDir::Write, 4096);
    let r = d.adapt(unit(IoDir::Read, 0));
    d.issued_write(w, 5);
    assert_eq!(d.read_seed(), None, "the mix's read");
    d.written(w, 5);
    d.issued_write(unit(IoDir::Write, 12288), 6);
    d.written(unit(IoDir::Write, 12288), 6);
    let v = d.next_read().unwrap();
    assert_eq!((v.dir, v.offset), (IoDir::Read, 4096));
    let again = d.adapt(r);
    assert_eq!(again.dir, IoDir::Read);
    // In issue order: the verify read expects seed 5, the mix read nothing.
    assert_eq!(d.read_seed(), Some(5));
    assert_eq!(d.read_seed(), None);
    // A job that only reads checks every read against the headers.
    let mut reader = state(&["rw=randread"]);
    let _ = reader.adapt(unit(IoDir::Read, 0));
    assert_eq!(reader.read_seed(), Some(0));
}

/// fio's verify-trim: chosen blocks are trimmed at the backlog points once
/// their write completed, then expected back as zeroes.
#[test]
fn verify_trims_trim_chosen_blocks_and_expect_zeroes() {
    let mut d = state(&[
        "rw=write",
        "trim_percentage=100",
        "trim_backlog=2",
        "trim_backlog_batch=1",
    ]);
    let (a, b) = (unit(IoDir::Write, 0), unit(IoDir::Write, 4096));
    d.issued_write(a, 11);
    assert_eq!(
        d.next_trim(),
        None,
        "one write: the backlog point is at two"
    );
    d.issued_write(b, 13);
    assert_eq!(d.next_trim(), None, "the chosen block's write is in flight");
    d.written(a, 11);
    d.written(b, 13);
    assert_eq!(d.next_trim(), Some(unit(IoDir::Trim, 0)));
    assert_eq!(d.next_trim(), None, "a batch of one");
    d.trimmed(unit(IoDir::Trim, 0));
    d.phase = true;
    assert_eq!(d.next_read(), Some(unit(IoDir::Read, 0)));
    let zero_seed = d.read_seed().unwrap();
    let path = std::path::Path::new("/tmp/x");
    let mut zeroes = vec![0u8; 4096];
    d.check(&mut zeroes, 0, zero_seed, path).unwrap();
    let mut stale = vec![0u8; 4096];
    stale[100] = 7;
    d.check(&mut stale, 0, zero_seed, path).unwrap();
    assert_eq!(d.failures, 1, "a trimmed block that is not zero fails");
    assert!(d
        .error()
        .unwrap()
        .to_string()
        .contains("trimmed block is not zero"));
}

#[test]
fn without_trim_verify_zero_a_trimmed_block_leaves_the_log() {
    let mut d = state(&[
        "rw=write",
        "trim_percentage=100",
        "trim_backlog=1",
        "trim_verify_zero=0",
    ]);
    let a = unit(IoDir::Write, 0);
    d.issued_write(a, 11);
    d.written(a, 11);
    assert_eq!(d.next_trim(), Some(unit(IoDir::Trim, 0)));
    d.trimmed(unit(IoDir::Trim, 0));
    d.phase = true;
    assert_eq!(d.next_read(), None);
}
