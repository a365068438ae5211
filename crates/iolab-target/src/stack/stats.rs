//! stats: count what passes through this point of the stack.
//!
//! Parameters:
//! - `name` (required, unique among stats layers): the name its counters
//!   have in the target's stats snapshot (under `layers`).
//!
//! Per operation: requests, errors, bytes, and the latency of the layers
//! below it in ns — from the call to when the reply may be sent (a delay
//! below counts; see [`IoCtx::hold_until`]). The server measures every
//! export from request received to reply sent on its own; a stats layer
//! tells what part of that the device below spends, or counts the I/O of
//! one device shared by several exports (put it below a split).

use std::sync::Arc;
use std::time::Instant;

use super::{BlockDev, BlockResult, Forward, IoCtx, Layer, Req};
use crate::measure::Recorder;

/// A counting layer.
#[derive(Debug)]
pub struct StatsLayer {
    next: Arc<dyn BlockDev>,
    name: String,
    rec: Arc<Recorder>,
}

impl StatsLayer {
    /// A layer recording into `rec` (which the target's stats registry also holds).
    pub fn new(next: Arc<dyn BlockDev>, name: String, rec: Arc<Recorder>) -> StatsLayer {
        StatsLayer { next, name, rec }
    }
}

impl Layer for StatsLayer {
    fn next(&self) -> &Arc<dyn BlockDev> {
        &self.next
    }

    fn label(&self) -> String {
        format!("stats({})", self.name)
    }

    fn around(&self, ctx: &mut IoCtx, req: Req, forward: Forward<'_>) -> BlockResult {
        let t0 = Instant::now();
        let r = forward(ctx);
        let end = Instant::now();
        let end = ctx.hold_until().map_or(end, |h| h.max(end));
        let lat_ns = (end - t0).as_nanos() as u64;
        self.rec.record(req.op, req.len_bytes, r.is_ok(), lat_ns);
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stack::delay::{DelayLayer, DelayParams};
    use crate::stack::null::NullDev;
    use crate::stack::ZeroReq;
    use std::time::Duration;

    #[test]
    fn counts_ops_bytes_and_latency_below() {
        let delay = DelayParams {
            read: Duration::from_millis(2),
            ..Default::default()
        };
        let below = Arc::new(DelayLayer::new(Arc::new(NullDev::new(1 << 20)), delay));
        let rec = Arc::new(Recorder::new());
        let s: Arc<dyn BlockDev> = Arc::new(StatsLayer::new(below, "dev".into(), rec.clone()));
        let mut ctx = IoCtx::new();
        s.read_at(&mut ctx, &mut [0u8; 4096], 0).unwrap();
        s.write_at(&mut IoCtx::new(), &[0u8; 512], 0, false)
            .unwrap();
        s.zero(
            &mut IoCtx::new(),
            ZeroReq {
                offset: 0,
                len_bytes: 1 << 20,
                may_trim: true,
                fua: false,
            },
        )
        .unwrap();
        let snap = rec.snapshot(false);
        assert_eq!((snap.read.ios, snap.read.bytes), (1, 4096));
        assert_eq!((snap.write.ios, snap.write.bytes), (1, 512));
        assert_eq!(snap.zero.bytes, 1 << 20);
        assert!(
            snap.read.lat_ns.max() >= 2_000_000,
            "the delay below is part of the latency"
        );
        assert!(snap.write.lat_ns.max() < 2_000_000);
    }
}
