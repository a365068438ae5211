//! Completion tickets: a reply whose hold time a device decides later.
//!
//! A device that reorders its queue (sim-hdd's NCQ) only knows when a
//! request completes once the request has been picked, which happens when
//! the device becomes free — after the call returned. Such a device puts a
//! [`Completion`] in the request's [`super::IoCtx`] instead of a hold time.
//! The server's timer (conn/reply.rs) polls it: [`Due::At`] is the final
//! completion time, [`Due::Recheck`] says when to ask again (when the device
//! next decides). Nobody sleeps or holds a lock meanwhile; a poll takes the
//! device's lock for the time of the decisions due by then.
//!
//! Layers above such a device see a request's hold time only as the lower
//! bound known when their call returns (a delay layer above adds to that).

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

/// What a poll says about one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// It completes at this instant (final).
    At(Instant),
    /// Not decided yet: poll again at this instant.
    Recheck(Instant),
}

/// A completion time decided later.
pub trait Completion: Send + Sync + fmt::Debug {
    fn poll(&self, now: Instant) -> Due;
}

/// The undecided completions of one request and the latest decided one.
#[derive(Debug, Clone, Default)]
pub struct Tickets {
    pending: Vec<Arc<dyn Completion>>,
    at: Option<Instant>,
}

impl Tickets {
    pub fn push(&mut self, t: Arc<dyn Completion>) {
        self.pending.push(t);
    }

    /// Whether nothing is left to decide.
    pub fn is_settled(&self) -> bool {
        self.pending.is_empty()
    }

    /// Poll every pending ticket at `now`: `At` (the latest of `floor` and
    /// every completion) once all are decided, else `Recheck` at the
    /// earliest instant one of them asks for.
    pub fn poll(&mut self, floor: Option<Instant>, now: Instant) -> Due {
        let mut recheck: Option<Instant> = None;
        let mut at = self.at;
        self.pending.retain(|t| match t.poll(now) {
            Due::At(i) => {
                at = Some(at.map_or(i, |a| a.max(i)));
                false
            }
            Due::Recheck(i) => {
                recheck = Some(recheck.map_or(i, |r| r.min(i)));
                true
            }
        });
        self.at = at;
        match recheck {
            Some(r) => Due::Recheck(r),
            None => {
                let t = match (floor, at) {
                    (Some(f), Some(a)) => f.max(a),
                    (f, a) => f.or(a).unwrap_or(now),
                };
                Due::At(t)
            }
        }
    }
}
