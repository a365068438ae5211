//! The member control plane: fail a RAID member of an export, or restore
//! it, while the target serves. [`MemberControl`] is its handle: the
//! server builds one over its exports ([`crate::ServerHandle::members`]),
//! and the HTTP endpoint serves it as `POST /member` ([`crate::http`]).
//! The work itself is the stack's ([`crate::stack::raid::live`]): this
//! handle only finds the export's stack by name.
//!
//! It is apart from [`crate::stats::Stats`] on purpose: measuring a window
//! and changing the array under it are two jobs, and a stats reader never
//! needs the power to fail a disk.

use std::sync::Arc;

use crate::export::ExportSet;
use crate::stack::raid::live;
use crate::stack::BlockDev;

/// Fails and restores RAID members of the served exports.
#[derive(Debug)]
pub struct MemberControl {
    stacks: Vec<(String, Arc<dyn BlockDev>)>,
}

impl MemberControl {
    /// A handle over the stacks of `exports`.
    pub fn new(exports: &ExportSet) -> MemberControl {
        MemberControl {
            stacks: exports
                .iter()
                .map(|e| (e.name().to_string(), e.dev().clone()))
                .collect(),
        }
    }

    /// Mark member `member` of export `export`'s RAID layer failed or
    /// working again (rebuilt first); a one-line description of what was
    /// done, or why it was refused.
    pub fn set_member_failed(
        &self,
        export: &str,
        member: usize,
        failed: bool,
    ) -> Result<String, String> {
        let (_, dev) = self
            .stacks
            .iter()
            .find(|(n, _)| n == export)
            .ok_or_else(|| format!("no export named '{export}'"))?;
        live::set_member_failed(dev, member, failed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::Export;
    use crate::stack::memory::MemoryDev;
    use crate::stack::raid::raid0::tests::mem;
    use crate::stack::raid::raid5::Raid5;

    #[test]
    fn finds_the_export_by_name_and_fails_its_member() {
        let raid: Arc<dyn BlockDev> = Arc::new(Raid5::new(mem(3, 1 << 20), 64 << 10).unwrap());
        let plain: Arc<dyn BlockDev> = Arc::new(MemoryDev::new(1 << 20).unwrap());
        let set = ExportSet::new(vec![
            Export::new("r", raid).unwrap(),
            Export::new("m", plain).unwrap(),
        ])
        .unwrap();
        let c = MemberControl::new(&set);
        let msg = c.set_member_failed("r", 1, true).unwrap();
        assert!(msg.contains("member 1 failed"), "{msg}");
        let e = c.set_member_failed("nope", 0, true).unwrap_err();
        assert_eq!(e, "no export named 'nope'");
        let e = c.set_member_failed("m", 0, true).unwrap_err();
        assert!(e.starts_with("no RAID layer in this export's stack"), "{e}");
    }
}
