//! Members failed and restored while serving: the data stays whole across
//! each transition, and a restore really rebuilds what the member missed
//! (a second member failed afterwards reads back through it).

use std::sync::Arc;

use super::set_member_failed;
use crate::stack::raid0::tests::mem;
use crate::stack::raid0::Striped;
use crate::stack::raid1::raid1;
use crate::stack::raid5::Raid5;
use crate::stack::{BlockDev, IoCtx};

const SIZE: u64 = 1 << 20;
const REGION: usize = 192 << 10;

fn pattern(seed: u8, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31) ^ seed)
        .collect()
}

fn write(d: &Arc<dyn BlockDev>, data: &[u8], off: u64) {
    d.write_at(&mut IoCtx::new(), data, off, false).unwrap();
}

fn read(d: &Arc<dyn BlockDev>, len: usize) -> Vec<u8> {
    let mut buf = vec![0u8; len];
    d.read_at(&mut IoCtx::new(), &mut buf, 0).unwrap();
    buf
}

/// Write A; fail `a` (reads whole); write B over part of it (degraded);
/// restore `a`; fail `b` (so `a`'s rebuilt data is read); reads whole.
fn across_transitions(d: Arc<dyn BlockDev>, a: usize, b: usize) {
    let mut want = pattern(1, REGION);
    write(&d, &want, 0);
    let msg = set_member_failed(&d, a, true).unwrap();
    assert!(msg.contains(&format!("member {a} failed")), "{msg}");
    assert_eq!(read(&d, REGION), want, "degraded read after a live failure");
    let b_data = pattern(2, 40 << 10);
    let at = 20 << 10; // not strip-aligned: rows partly written
    write(&d, &b_data, at as u64);
    want[at..at + b_data.len()].copy_from_slice(&b_data);
    assert_eq!(read(&d, REGION), want, "degraded write, degraded read");
    let msg = set_member_failed(&d, a, false).unwrap();
    assert!(
        msg.contains("working again") && !msg.contains(" 0 bytes"),
        "{msg}"
    );
    assert_eq!(read(&d, REGION), want, "after the restore");
    set_member_failed(&d, b, true).unwrap();
    assert_eq!(read(&d, REGION), want, "through the rebuilt member");
}

#[test]
fn raid5_member_fails_and_is_rebuilt_while_serving() {
    let d: Arc<dyn BlockDev> = Arc::new(Raid5::new(mem(4, SIZE), 16 << 10).unwrap());
    across_transitions(d, 1, 2);
}

#[test]
fn raid1_member_fails_and_is_rebuilt_while_serving() {
    let d: Arc<dyn BlockDev> = Arc::new(raid1(mem(2, SIZE)).unwrap());
    across_transitions(d, 0, 1);
}

#[test]
fn raid10_member_fails_and_is_rebuilt_while_serving() {
    let d: Arc<dyn BlockDev> =
        Arc::new(crate::stack::raid10::raid10(mem(4, SIZE), 16 << 10).unwrap());
    across_transitions(d, 2, 3);
}

#[test]
fn changes_that_would_lose_data_are_refused() {
    let r5: Arc<dyn BlockDev> = Arc::new(Raid5::new(mem(3, SIZE), 16 << 10).unwrap());
    set_member_failed(&r5, 0, true).unwrap();
    let e = set_member_failed(&r5, 1, true).unwrap_err();
    assert!(e.contains("member 0 has failed already"), "{e}");
    assert!(set_member_failed(&r5, 7, true)
        .unwrap_err()
        .contains("not 7"));
    let r0: Arc<dyn BlockDev> = Arc::new(Striped::raid0(mem(2, SIZE), 16 << 10).unwrap());
    assert!(set_member_failed(&r0, 1, true)
        .unwrap_err()
        .contains("only working copy"));
    let plain: Arc<dyn BlockDev> = mem(1, SIZE).remove(0);
    assert!(set_member_failed(&plain, 0, true)
        .unwrap_err()
        .contains("no RAID layer"));
}

/// A member failed from the start (config `failed=`) missed everything:
/// restored while serving, all of it is rebuilt, a piece at a time.
#[test]
fn a_member_failed_at_config_time_is_rebuilt_whole() {
    let r = Raid5::new(mem(3, SIZE), 16 << 10).unwrap();
    r.members.fail(1);
    let d: Arc<dyn BlockDev> = Arc::new(r);
    let want = pattern(3, REGION);
    write(&d, &want, 0);
    let msg = set_member_failed(&d, 1, false).unwrap();
    assert!(msg.contains(&format!("{SIZE} bytes rebuilt")), "{msg}");
    set_member_failed(&d, 0, true).unwrap();
    assert_eq!(read(&d, REGION), want, "through the member rebuilt whole");
}
