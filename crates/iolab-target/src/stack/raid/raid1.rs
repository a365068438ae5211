//! raid1: mirroring over every member.
//!
//! Parameters: `members` (at least 2), `member`, `failed` — see raid.rs
//! (no `strip`: a mirror does not stripe).
//!
//! A write goes to every working member, in one phase (it completes with
//! the slowest copy); a read goes to one member: the one whose last I/O
//! ended where this read starts (a sequential stream stays on one disk,
//! keeping its read-ahead useful, as Linux md's read balance does), else
//! the next working member in turn. With failed members the others carry
//! on; with every member failed requests fail with EIO.
//!
//! Size: the smallest member's (cut to whole sectors). The engine is the
//! striping one of raid0.rs with a single column.

use std::sync::Arc;

use super::raid0::Striped;
use crate::stack::BlockDev;

/// raid1 over `devs`.
pub fn raid1(devs: Vec<Arc<dyn BlockDev>>) -> Result<Striped, String> {
    let n = devs.len();
    Striped::new("raid1", devs, None, n.max(1), 2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stack::raid::raid0::tests::{count, mem};
    use crate::stack::IoCtx;

    #[test]
    fn a_write_is_two_writes_and_a_read_is_one() {
        let r = raid1(mem(2, 1 << 20)).unwrap();
        assert_eq!(r.caps().size_bytes, 1 << 20);
        let data = vec![0xa5u8; 8192];
        r.write_at(&mut IoCtx::new(), &data, 4096, false).unwrap();
        assert_eq!(count(&r, "member0.writes"), 1);
        assert_eq!(count(&r, "member1.writes"), 1);
        let mut back = vec![0u8; 8192];
        r.read_at(&mut IoCtx::new(), &mut back, 4096).unwrap();
        assert_eq!(back, data);
        let reads = count(&r, "member0.reads") + count(&r, "member1.reads");
        assert_eq!(reads, 1);
    }

    #[test]
    fn a_stream_stays_on_one_mirror_and_random_reads_alternate() {
        let r = raid1(mem(2, 1 << 20)).unwrap();
        let mut b = vec![0u8; 4096];
        for k in 0..8 {
            r.read_at(&mut IoCtx::new(), &mut b, k * 4096).unwrap();
        }
        let (a, c) = (count(&r, "member0.reads"), count(&r, "member1.reads"));
        assert!(a == 8 || c == 8, "{a} {c}");
        for k in [100u64, 7, 50, 30] {
            r.read_at(&mut IoCtx::new(), &mut b, k * 4096).unwrap();
        }
        assert_eq!(count(&r, "member0.reads") + count(&r, "member1.reads"), 12);
        assert!(count(&r, "member0.reads") >= 2 && count(&r, "member1.reads") >= 2);
    }

    #[test]
    fn survives_a_failed_member_and_not_two() {
        let r = raid1(mem(2, 1 << 20)).unwrap();
        let data = vec![7u8; 4096];
        r.write_at(&mut IoCtx::new(), &data, 0, false).unwrap();
        r.members.fail(0);
        let mut back = vec![0u8; 4096];
        r.read_at(&mut IoCtx::new(), &mut back, 0).unwrap();
        assert_eq!(back, data);
        r.write_at(&mut IoCtx::new(), &data, 4096, false).unwrap();
        assert_eq!(count(&r, "member0.writes"), 1);
        assert_eq!(count(&r, "member1.writes"), 2);
        r.members.fail(1);
        assert!(r.read_at(&mut IoCtx::new(), &mut back, 0).is_err());
    }
}
