//! A member failed or restored while the target serves (not only at
//! config time): the control behind the stats endpoint's `POST /member`.
//!
//! - Fail: the member is read and written no more; raid5 reconstructs its
//!   strips from the others, a mirror reads the other copy. Refused where
//!   it would lose data (raid0; a raid5 with a member failed already; the
//!   last working copy of a mirror).
//! - Restore: what the member missed while failed (every write it was
//!   left out of, recorded as md's write-intent bitmap does) is rebuilt
//!   first — raid5: the XOR of the other members over those ranges; a
//!   mirror: a copy from a working one — then it is read and written
//!   again. The rebuild runs with no request in flight (the members'
//!   gate) and takes no simulated time: it is a data operation here, not
//!   a modelled resync.
//!
//! Either way the change waits for the requests in flight and applies
//! between requests, so none sees half of it; raid5's stripe cache is
//! emptied (rows written while degraded were not kept in it).

use std::sync::Arc;

use super::raid5::Raid5;
use super::{xor_into, Members};
use crate::stack::{BlockDev, IoCtx};

/// The most a rebuild moves at once (its buffers' size).
const REBUILD_PIECE_BYTES: u64 = 1 << 20;

/// Mark member `member` of the first RAID layer in `root`'s stack failed
/// (or working again); a one-line description of what was done.
pub fn set_member_failed(
    root: &Arc<dyn BlockDev>,
    member: usize,
    failed: bool,
) -> Result<String, String> {
    let mut todo = vec![root.clone()];
    while let Some(d) = todo.pop() {
        if let Some(r) = d.set_member_failed(member, failed) {
            return r;
        }
        todo.extend(d.children());
    }
    Err(format!(
        "no RAID layer in this export's stack ({})",
        root.describe()
    ))
}

/// raid5: fail member `i` or restore it.
pub(super) fn raid5(r: &Raid5, i: usize, failed: bool) -> Result<String, String> {
    let _alone = r.members.exclusive();
    if !check(&r.members, "raid5", i, failed)? {
        let state = if failed { "failed" } else { "working" };
        return Ok(format!("raid5: member {i} is {state} already"));
    }
    // Rows written while degraded were not kept: start empty.
    r.stripes.clear();
    if !failed {
        let m = &r.members;
        return restore(m, "raid5", i, |buf, off| xor_of_others(m, i, buf, off));
    }
    if let Some(f) = (0..r.n()).find(|&m| r.members.is_failed(m)) {
        return Err(format!(
            "raid5: member {f} has failed already; failing member {i} too would lose data"
        ));
    }
    r.members.fail_live(i);
    Ok(format!(
        "raid5: member {i} failed (its strips are reconstructed from the others)"
    ))
}

/// Check the index and the state asked for; `Ok(false)`: nothing to do.
pub(super) fn check(m: &Members, level: &str, i: usize, failed: bool) -> Result<bool, String> {
    if i >= m.len() {
        return Err(format!("{level} has members 0..{}, not {i}", m.len()));
    }
    Ok(m.is_failed(i) != failed)
}

/// Rebuild member `i`'s missed ranges with `fill` (which fills a buffer
/// with what belongs at an offset), then mark it working.
pub(super) fn restore(
    m: &Members,
    level: &str,
    i: usize,
    mut fill: impl FnMut(&mut [u8], u64) -> Result<(), String>,
) -> Result<String, String> {
    let ranges = m.take_missed(i);
    let mut bytes = 0u64;
    // A piece at a time: a whole member can be gigabytes.
    let mut buf = Vec::new();
    for &(start, len) in &ranges {
        let mut off = start;
        while off < start + len {
            let n = (start + len - off).min(REBUILD_PIECE_BYTES);
            buf.resize(n as usize, 0);
            fill(&mut buf, off)?;
            m.get(i)
                .dev
                .write_at(&mut IoCtx::new(), &buf, off, false)
                .map_err(|e| format!("{level}: rebuild of member {i} at {off}: {e}"))?;
            off += n;
        }
        bytes += len;
    }
    m.get_failed_reset(i);
    Ok(format!(
        "{level}: member {i} working again ({} range(s), {bytes} bytes rebuilt)",
        ranges.len()
    ))
}

/// Read `len` bytes of member `j` at `off` (a rebuild's source).
pub(super) fn read_member(m: &Members, j: usize, buf: &mut [u8], off: u64) -> Result<(), String> {
    m.get(j)
        .dev
        .read_at(&mut IoCtx::new(), buf, off)
        .map_err(|e| format!("rebuild: read of member {j} at {off}: {e}"))
}

/// raid5's rebuild source: the XOR of every other member.
pub(super) fn xor_of_others(m: &Members, i: usize, buf: &mut [u8], off: u64) -> Result<(), String> {
    buf.fill(0);
    let mut tmp = vec![0u8; buf.len()];
    for j in (0..m.len()).filter(|&j| j != i) {
        read_member(m, j, &mut tmp, off)?;
        xor_into(buf, &tmp);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Members failed and restored while serving: the data stays whole across
    //! each transition, and a restore really rebuilds what the member missed
    //! (a second member failed afterwards reads back through it).

    use std::sync::Arc;

    use super::set_member_failed;
    use crate::stack::raid::raid0::tests::mem;
    use crate::stack::raid::raid0::Striped;
    use crate::stack::raid::raid1::raid1;
    use crate::stack::raid::raid5::Raid5;
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
            Arc::new(crate::stack::raid::raid10::raid10(mem(4, SIZE), 16 << 10).unwrap());
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
}
