//! Running requests on the export's block stack: inline on the reader
//! thread, or on a small worker pool when the stack may block.
//!
//! A stack that never sleeps (memory, null, with any layers: delays do not
//! sleep) is fastest run inline — no hand-off between threads, the reply
//! goes out from the thread that read the request, together with the other
//! replies that thread could give without waiting. A stack that may block
//! (file I/O) runs on `workers` threads per connection, fed through a
//! queue, so that up to that many requests are on the device at once, as
//! nbdkit does with its per-connection threads.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender};

use super::reply::{Done, Replier};
use crate::buf::AlignedBuf;
use crate::pacing::Grant;
use crate::proto::request::Command;
use crate::stack::{BlockDev, IoCtx, Op, ZeroReq};

/// A valid request with its data buffer, ready to run.
#[derive(Debug)]
pub(crate) struct Job {
    pub cookie: u64,
    pub cmd: Command,
    pub buf: Option<AlignedBuf>,
    /// Pacing buffers held until the reply is sent.
    pub grant: Option<Grant>,
    /// Start of the server-side latency (see `transmit`).
    pub started: Instant,
}

/// The op a command counts under.
pub(crate) fn op_of(cmd: &Command) -> Option<Op> {
    match cmd {
        Command::Read { .. } => Some(Op::Read),
        Command::Write { .. } => Some(Op::Write),
        Command::Flush => Some(Op::Flush),
        Command::Trim { .. } => Some(Op::Trim),
        Command::WriteZeroes { .. } => Some(Op::Zero),
        Command::Disconnect => None,
    }
}

/// Run `job` on `dev`.
pub(crate) fn execute(dev: &dyn BlockDev, mut job: Job) -> Done {
    let mut ctx = IoCtx::new();
    let (result, bytes, read_offset) = match job.cmd {
        Command::Read { offset, len_bytes } => {
            let buf = job.buf.as_mut().expect("reads carry a buffer");
            (
                dev.read_at(&mut ctx, buf, offset),
                u64::from(len_bytes),
                Some(offset),
            )
        }
        Command::Write {
            offset,
            len_bytes,
            fua,
        } => {
            let buf = job.buf.as_ref().expect("writes carry their payload");
            (
                dev.write_at(&mut ctx, buf, offset, fua),
                u64::from(len_bytes),
                None,
            )
        }
        Command::Flush => (dev.flush(&mut ctx), 0, None),
        Command::Trim {
            offset,
            len_bytes,
            fua,
        } => (
            dev.trim(&mut ctx, offset, u64::from(len_bytes), fua),
            u64::from(len_bytes),
            None,
        ),
        Command::WriteZeroes {
            offset,
            len_bytes,
            fua,
            may_trim,
        } => {
            let z = ZeroReq {
                offset,
                len_bytes: u64::from(len_bytes),
                may_trim,
                fua,
            };
            let r = dev.zero(&mut ctx, z);
            (r, u64::from(len_bytes), None)
        }
        Command::Disconnect => unreachable!("disconnect is handled by the reader"),
    };
    Done {
        cookie: job.cookie,
        op: op_of(&job.cmd),
        bytes,
        read_offset,
        buf: job.buf,
        grant: job.grant,
        result,
        started: job.started,
        hold_until: ctx.hold_until(),
        tickets: ctx.take_tickets(),
    }
}

/// Where the reader sends valid requests.
#[derive(Debug)]
pub(crate) enum Executor {
    Inline {
        dev: Arc<dyn BlockDev>,
        replier: Arc<Replier>,
    },
    Pool {
        tx: Option<Sender<Job>>,
        threads: Vec<JoinHandle<()>>,
    },
}

impl Executor {
    /// Inline for stacks that never block, else a pool of `workers` threads
    /// (under `SCHED_FIFO` with `realtime`).
    pub fn new(
        dev: Arc<dyn BlockDev>,
        replier: Arc<Replier>,
        (workers, realtime): (usize, bool),
        conn_id: u64,
    ) -> std::io::Result<Executor> {
        if !dev.caps().may_block {
            return Ok(Executor::Inline { dev, replier });
        }
        let (tx, rx) = crossbeam_channel::unbounded::<Job>();
        let threads = (0..workers.max(1))
            .map(|i| {
                let (dev, replier, rx): (_, _, Receiver<Job>) =
                    (dev.clone(), replier.clone(), rx.clone());
                std::thread::Builder::new()
                    .name(format!("nbd-{conn_id}-w{i}"))
                    .spawn(move || {
                        // The connection's timer already took the same
                        // class (a refusal ended the connection there).
                        let _ = super::sched::tune_current(realtime);
                        for job in rx {
                            replier.complete(execute(&*dev, job));
                        }
                    })
            })
            .collect::<std::io::Result<Vec<_>>>()?;
        Ok(Executor::Pool {
            tx: Some(tx),
            threads,
        })
    }

    /// Run `job` or queue it; `Some(done)` when it ran inline and its
    /// reply is due now — the caller sends it (possibly with others).
    /// Replies held by a delay layer go to the timer, pool replies are
    /// sent by the workers.
    pub fn submit(&self, job: Job) -> Option<Done> {
        match self {
            Executor::Inline { dev, replier } => replier.hold(execute(&**dev, job)),
            Executor::Pool { tx, .. } => {
                let tx = tx.as_ref().expect("the pool is open until close()");
                tx.send(job).expect("workers live until close()");
                None
            }
        }
    }

    /// Let the workers finish their queue and exit.
    pub fn close(&mut self) {
        if let Executor::Pool { tx, threads } = self {
            tx.take();
            for t in threads.drain(..) {
                let _ = t.join();
            }
        }
    }
}
