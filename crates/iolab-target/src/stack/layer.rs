//! Layers that forward by default, and the counters any piece publishes.
//!
//! A [`Layer`] wraps one device beneath it ([`Layer::next`]) and, like an
//! nbdkit filter calling `next`, forwards every operation and its caps
//! there unless it overrides that method: a layer writes only what it
//! changes. A layer that acts alike on every operation (a delay, error
//! injection, counting) writes one method, [`Layer::around`], which the
//! default operations call with the request ([`Req`]) and the forwarding
//! call. Every `Layer` is a [`BlockDev`] (blanket impl below), whose
//! `describe` is the layer's [`Layer::label`] followed by `<-` and what it
//! wraps. A piece over several members (raid) implements [`BlockDev`]
//! itself and lists its members in [`BlockDev::children`].
//!
//! Counters: a layer or backend publishes named figures with
//! [`BlockDev::counters`] (default none) — requests, bytes, cache hits and
//! misses, read-modify-writes, destages, bytes allocated. [`walk`] visits a
//! stack from the top through `children`, and the target's stats report
//! every piece that has counters under its export and its path in the stack
//! (`cache/raid5/memory[2]`: the third member of the raid5 under the cache),
//! per window: a total counts from the window's start, a gauge is its value
//! now.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{BlockDev, BlockResult, Caps, IoCtx, Op, ZeroReq};

/// A named figure a device publishes into the target's stats. Names carry
/// their unit where there is one (`read_bytes`, `cache_hits`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counter {
    pub name: String,
    pub value: u64,
    /// A level (bytes allocated now), not a running total: reported as is,
    /// never reset with the window.
    #[serde(default)]
    pub gauge: bool,
}

impl Counter {
    /// A running total (events, bytes) since the device was built.
    pub fn total(name: impl Into<String>, value: u64) -> Counter {
        Counter {
            name: name.into(),
            value,
            gauge: false,
        }
    }

    /// A level at this instant.
    pub fn gauge(name: impl Into<String>, value: u64) -> Counter {
        Counter {
            name: name.into(),
            value,
            gauge: true,
        }
    }
}

/// One request as [`Layer::around`] sees it (a flush has no range: 0, 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Req {
    pub op: Op,
    pub offset: u64,
    pub len_bytes: u64,
}

/// The call [`Layer::around`] gets that passes a request on to the device
/// beneath (once). A `dyn` call: a few ns, noise next to a request's system calls.
pub type Forward<'a> = &'a mut dyn FnMut(&mut IoCtx) -> BlockResult;

/// A block device over one device beneath, forwarding what it does not
/// override. Implement `next` and `label`, then only what the layer changes.
pub trait Layer: Send + Sync + fmt::Debug {
    /// The device beneath.
    fn next(&self) -> &Arc<dyn BlockDev>;

    /// This layer and its settings, e.g. `delay(read=1ms)`.
    fn label(&self) -> String;

    fn caps(&self) -> Caps {
        self.next().caps()
    }

    fn counters(&self) -> Vec<Counter> {
        Vec::new()
    }

    /// Every default operation runs as `around(ctx, req, forward)`, where
    /// `forward` passes the request on to the device beneath: act before
    /// and after it, or instead of it. Default: forward.
    fn around(&self, ctx: &mut IoCtx, _req: Req, forward: Forward<'_>) -> BlockResult {
        forward(ctx)
    }

    fn read_at(&self, ctx: &mut IoCtx, buf: &mut [u8], offset: u64) -> BlockResult {
        let req = Req {
            op: Op::Read,
            offset,
            len_bytes: buf.len() as u64,
        };
        self.around(ctx, req, &mut |c| self.next().read_at(c, buf, offset))
    }

    fn write_at(&self, ctx: &mut IoCtx, buf: &[u8], offset: u64, fua: bool) -> BlockResult {
        let req = Req {
            op: Op::Write,
            offset,
            len_bytes: buf.len() as u64,
        };
        self.around(ctx, req, &mut |c| self.next().write_at(c, buf, offset, fua))
    }

    fn flush(&self, ctx: &mut IoCtx) -> BlockResult {
        let req = Req {
            op: Op::Flush,
            offset: 0,
            len_bytes: 0,
        };
        self.around(ctx, req, &mut |c| self.next().flush(c))
    }

    fn trim(&self, ctx: &mut IoCtx, offset: u64, len_bytes: u64, fua: bool) -> BlockResult {
        let req = Req {
            op: Op::Trim,
            offset,
            len_bytes,
        };
        self.around(ctx, req, &mut |c| {
            self.next().trim(c, offset, len_bytes, fua)
        })
    }

    /// Zero a range ([`ZeroReq`]).
    fn zero(&self, ctx: &mut IoCtx, z: ZeroReq) -> BlockResult {
        let req = Req {
            op: Op::Zero,
            offset: z.offset,
            len_bytes: z.len_bytes,
        };
        self.around(ctx, req, &mut |c| self.next().zero(c, z))
    }
}

impl<L: Layer> BlockDev for L {
    fn caps(&self) -> Caps {
        Layer::caps(self)
    }

    fn describe(&self) -> String {
        format!("{} <- {}", self.label(), self.next().describe())
    }

    fn read_at(&self, ctx: &mut IoCtx, buf: &mut [u8], offset: u64) -> BlockResult {
        Layer::read_at(self, ctx, buf, offset)
    }

    fn write_at(&self, ctx: &mut IoCtx, buf: &[u8], offset: u64, fua: bool) -> BlockResult {
        Layer::write_at(self, ctx, buf, offset, fua)
    }

    fn flush(&self, ctx: &mut IoCtx) -> BlockResult {
        Layer::flush(self, ctx)
    }

    fn trim(&self, ctx: &mut IoCtx, offset: u64, len_bytes: u64, fua: bool) -> BlockResult {
        Layer::trim(self, ctx, offset, len_bytes, fua)
    }

    fn zero(&self, ctx: &mut IoCtx, z: ZeroReq) -> BlockResult {
        Layer::zero(self, ctx, z)
    }

    fn counters(&self) -> Vec<Counter> {
        Layer::counters(self)
    }

    fn children(&self) -> Vec<Arc<dyn BlockDev>> {
        vec![self.next().clone()]
    }
}

/// Visit `top` and everything beneath it, depth first, with each piece's
/// path (`delay/memory`; members of a piece with several get `[i]`). A
/// device reached twice (one device under every part of a split, seen from
/// several exports) is visited once: `seen` holds what was visited.
pub fn walk(
    top: &Arc<dyn BlockDev>,
    seen: &mut HashSet<*const ()>,
    visit: &mut dyn FnMut(&str, &dyn BlockDev),
) {
    walk_at(top, top.name(), seen, visit);
}

fn walk_at(
    dev: &Arc<dyn BlockDev>,
    path: String,
    seen: &mut HashSet<*const ()>,
    visit: &mut dyn FnMut(&str, &dyn BlockDev),
) {
    if !seen.insert(Arc::as_ptr(dev).cast::<()>()) {
        return;
    }
    visit(&path, dev.as_ref());
    let kids = dev.children();
    let many = kids.len() > 1;
    for (i, k) in kids.iter().enumerate() {
        let name = if many {
            format!("{}[{i}]", k.name())
        } else {
            k.name()
        };
        walk_at(k, format!("{path}/{name}"), seen, visit);
    }
}
