//! raid10: striping over mirror pairs (md's "near 2" layout).
//!
//! Parameters: `members` (an even number, at least 4), `member`, `strip`
//! (default 64k), `failed` — see raid.rs.
//!
//! Members 0 and 1 hold column 0, members 2 and 3 column 1, and so on;
//! strips go round the columns as in raid0, and each column is a raid1
//! pair: a write is two member writes per column touched, a read one
//! (the pair's member that is streaming there, else each in turn). The
//! array survives one failed member per pair.
//!
//! Size: `members / 2 x member size` (each member cut to whole strips).

use std::sync::Arc;

use super::raid0::Striped;
use crate::stack::BlockDev;

/// raid10 over `devs`, mirrored in pairs.
pub fn raid10(devs: Vec<Arc<dyn BlockDev>>, strip: u64) -> Result<Striped, String> {
    Striped::new("raid10", devs, Some(strip), 2, 4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stack::raid::raid0::tests::{count, mem};
    use crate::stack::IoCtx;

    #[test]
    fn strips_go_round_the_pairs() {
        let r = raid10(mem(4, 1 << 20), 4096).unwrap();
        assert_eq!(r.caps().size_bytes, 2 << 20);
        let data: Vec<u8> = (0..8192).map(|i| (i % 253) as u8).collect();
        r.write_at(&mut IoCtx::new(), &data, 0, false).unwrap();
        for i in 0..4 {
            assert_eq!(count(&r, &format!("member{i}.writes")), 1, "member {i}");
        }
        r.members.fail(0);
        r.members.fail(3);
        let mut back = vec![0u8; 8192];
        r.read_at(&mut IoCtx::new(), &mut back, 0).unwrap();
        assert_eq!(back, data);
        assert_eq!(count(&r, "member1.reads"), 1);
        assert_eq!(count(&r, "member2.reads"), 1);
    }

    #[test]
    fn needs_an_even_number_of_at_least_four() {
        assert!(raid10(mem(2, 1 << 20), 4096)
            .unwrap_err()
            .contains("at least 4"));
        assert!(raid10(mem(5, 1 << 20), 4096)
            .unwrap_err()
            .contains("multiple of 2"));
    }
}
