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

    /// Take over `other`'s tickets (a layer joining its members' requests).
    pub fn append(&mut self, other: Tickets) {
        self.pending.extend(other.pending);
        self.at = match (self.at, other.at) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
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
        // The floor is kept: the caller replaces its hold time with the
        // recheck instant meanwhile (which is never past a completion
        // still to be decided, so keeping that too is harmless).
        let mut at = match (self.at, floor) {
            (Some(a), Some(f)) => Some(a.max(f)),
            (a, f) => a.or(f),
        };
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
            None => Due::At(at.unwrap_or(now)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Decided at `at` once `now` reaches `decide_at`.
    #[derive(Debug)]
    struct Fake {
        decide_at: Instant,
        at: Instant,
    }

    impl Completion for Fake {
        fn poll(&self, now: Instant) -> Due {
            if now >= self.decide_at {
                Due::At(self.at)
            } else {
                Due::Recheck(self.decide_at)
            }
        }
    }

    #[test]
    fn the_latest_of_floor_and_completions_once_all_are_decided() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let mut a = Tickets::default();
        a.push(Arc::new(Fake {
            decide_at: ms(2),
            at: ms(7),
        }));
        let mut b = Tickets::default();
        b.push(Arc::new(Fake {
            decide_at: ms(4),
            at: ms(5),
        }));
        a.append(b);
        // A floor later than both completions (a delay above) is kept
        // through the rechecks, which replace the caller's hold time.
        assert_eq!(a.poll(Some(ms(9)), ms(0)), Due::Recheck(ms(2)));
        assert_eq!(a.poll(Some(ms(2)), ms(2)), Due::Recheck(ms(4)));
        assert!(!a.is_settled());
        assert_eq!(a.poll(Some(ms(4)), ms(4)), Due::At(ms(9)));
        assert!(a.is_settled());
        let mut c = Tickets::default();
        c.push(Arc::new(Fake {
            decide_at: ms(0),
            at: ms(6),
        }));
        assert_eq!(c.poll(Some(ms(1)), ms(1)), Due::At(ms(6)));
    }
}
