//! How the member I/Os of one RAID request compose in time: [`Phase`]
//! (member I/Os side by side; the phase ends with the slowest), and the
//! tickets of members whose completion is decided later ([`Joined`],
//! [`After`], [`pass`]), shared by the RAID levels and the cache.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::stack::ticket::{Completion, Due, Tickets};
use crate::stack::IoCtx;

/// Member I/Os that run side by side: each starts at `start` and the
/// phase completes with the slowest. A member whose completion is decided
/// later (a ticket: sim-hdd's NCQ) adds its ticket; the request waits for
/// every one. A dependent phase starts at the completion known so far (a
/// lower bound when tickets are pending: it may start early under load).
#[derive(Debug, Default)]
pub struct Phase {
    start: Option<Instant>,
    done: Option<Instant>,
    tickets: Vec<Arc<dyn Completion>>,
}

impl Phase {
    /// A first phase, starting when the request's layers below are done.
    pub fn after(ctx: &IoCtx) -> Phase {
        Phase {
            start: ctx.hold_until(),
            done: ctx.hold_until(),
            tickets: Vec::new(),
        }
    }

    /// The phase that starts when this one completes (the request still
    /// waits for this one's tickets).
    pub fn then(self) -> Phase {
        Phase {
            start: self.done,
            done: self.done,
            tickets: self.tickets,
        }
    }

    /// A member request of this phase (it arrives when the phase starts).
    pub fn child(&self) -> IoCtx {
        IoCtx::starting_at(self.start)
    }

    /// Fold a member request's hold and tickets into the phase.
    pub fn join(&mut self, c: &mut IoCtx) {
        if let Some(t) = c.hold_until() {
            self.done = Some(self.done.map_or(t, |d| d.max(t)));
        }
        if let Some(t) = ticket_of(c) {
            self.tickets.push(t);
        }
    }

    /// Fold this phase into `other` (parallel rows).
    pub fn finish_into(self, other: &mut Phase) {
        if let Some(t) = self.done {
            other.done = Some(other.done.map_or(t, |d| d.max(t)));
        }
        other.tickets.extend(self.tickets);
    }

    /// The completion known now (a lower bound while tickets are pending).
    pub fn done(&self) -> Option<Instant> {
        self.done
    }

    /// The phase's completion as one shareable ticket (`None` when known).
    pub fn ticket(&self) -> Option<Arc<dyn Completion>> {
        match self.tickets.len() {
            0 => None,
            1 => Some(self.tickets[0].clone()),
            _ => {
                let mut t = Tickets::default();
                self.tickets.iter().for_each(|x| t.push(x.clone()));
                Some(Arc::new(Joined::new(t)))
            }
        }
    }

    /// Hold the request until this phase completes.
    pub fn finish(self, ctx: &mut IoCtx) {
        if let Some(t) = self.done {
            ctx.hold_until_at(t);
        }
        for t in self.tickets {
            ctx.add_ticket(t);
        }
    }
}

/// Several tickets as one, polled together and remembered once decided
/// (so many requests may wait on it: a ticket itself is taken when decided).
#[derive(Debug)]
pub struct Joined(Mutex<Tickets>);

impl Joined {
    pub fn new(t: Tickets) -> Joined {
        Joined(Mutex::new(t))
    }
}

impl Completion for Joined {
    fn poll(&self, now: Instant) -> Due {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .poll(None, now)
    }
}

/// A ticket's completion plus a fixed time (a cache hit on data still
/// arriving: the transfer to the host follows the arrival).
#[derive(Debug)]
pub struct After(pub Arc<dyn Completion>, pub Duration);

impl Completion for After {
    fn poll(&self, now: Instant) -> Due {
        match self.0.poll(now) {
            Due::At(t) => Due::At(t + self.1),
            d => d,
        }
    }
}

/// Move a finished request's hold and tickets from `from` into `to`.
pub fn pass(from: &mut IoCtx, to: &mut IoCtx) {
    if let Some(t) = from.hold_until() {
        to.hold_until_at(t);
    }
    if let Some(t) = ticket_of(from) {
        to.add_ticket(t);
    }
}

/// A request's undecided completions as one shareable ticket.
pub fn ticket_of(c: &mut IoCtx) -> Option<Arc<dyn Completion>> {
    let t = c.take_tickets();
    (!t.is_settled()).then(|| Arc::new(Joined::new(t)) as Arc<dyn Completion>)
}
