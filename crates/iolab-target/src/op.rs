//! [`Op`]: the operations of a block request (read, write, flush, trim,
//! zero), the vocabulary the block stack and the measurement share.
//!
//! A leaf: it imports nothing from the crate, so [`crate::stack`] (whose
//! devices answer these operations) and [`crate::measure`] (which counts
//! them) both use it without importing each other in a circle.

/// The operations of a block device, for per-op settings and counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    Read,
    Write,
    Flush,
    Trim,
    Zero,
}

impl Op {
    pub const ALL: [Op; 5] = [Op::Read, Op::Write, Op::Flush, Op::Trim, Op::Zero];

    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Flush => "flush",
            Op::Trim => "trim",
            Op::Zero => "zero",
        }
    }

    /// The op named `s` (as [`Op::name`] spells it).
    pub fn parse(s: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|o| o.name() == s)
    }

    /// Position in [`Op::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}
