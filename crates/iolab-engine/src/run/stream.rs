//! The run's intervals streamed to an interval log while it runs
//! ([`Run::stream_intervals`](super::Run::stream_intervals)): every worker
//! message the run takes in (each poll, and at the end) is fed to an
//! [`IntervalStream`] (iolab-core `stats::stream`), which merges each
//! job's workers interval by interval and writes the `.hlog`; the buffer
//! goes to the file after every batch, so a run killed at any point leaves
//! every interval written before its last poll.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use iolab_core::job::PreparedJob;
use iolab_core::stats::hlog::HlogWriter;
use iolab_core::stats::stream::{IntervalStream, StreamJob};
use iolab_core::stats::IntervalLogRef;

use crate::worker::WorkerMsg;
use crate::EngineError;

/// What was asked, and the stream once the run has started.
#[derive(Debug)]
pub struct Streaming {
    path: PathBuf,
    per_worker: bool,
    live: Option<LiveStream>,
    /// The first write error: the run goes on, the result reports it.
    error: Option<String>,
}

struct LiveStream {
    stream: IntervalStream<BufWriter<File>>,
    /// CLOCK_MONOTONIC ns of the log's base time.
    base_mono_ns: u64,
}

impl std::fmt::Debug for LiveStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LiveStream(base_mono_ns={})", self.base_mono_ns)
    }
}

impl Streaming {
    pub fn new(path: &Path, per_worker: bool) -> Streaming {
        Streaming {
            path: path.to_path_buf(),
            per_worker,
            live: None,
            error: None,
        }
    }

    /// Create the log (its base time: `anchor`, the same instant on both
    /// clocks).
    pub fn begin(
        &mut self,
        jobs: &[PreparedJob],
        host: &str,
        interval_ns: u64,
        anchor: (u64, u64),
    ) -> Result<(), EngineError> {
        let io = |source| EngineError::Io {
            path: self.path.clone(),
            op: "create the interval log",
            source,
        };
        let file = File::create(&self.path).map_err(io)?;
        let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
        let what = format!(
            "iolab {} on {host}: jobs {}",
            iolab_core::VERSION,
            names.join(" ")
        );
        let log =
            HlogWriter::begin(BufWriter::new(file), anchor.0, interval_ns, &what).map_err(io)?;
        let specs: Vec<StreamJob> = jobs
            .iter()
            .map(|j| StreamJob {
                name: j.name.clone(),
                workers: j.workers(),
            })
            .collect();
        let mut stream = IntervalStream::new(log, &specs, host, self.per_worker).map_err(io)?;
        stream.flush().map_err(io)?;
        self.live = Some(LiveStream {
            stream,
            base_mono_ns: anchor.1,
        });
        Ok(())
    }

    /// Take one worker message in (before the tracker does).
    pub fn feed(&mut self, m: &WorkerMsg) {
        let Some(l) = self.live.as_mut() else { return };
        let r = match m {
            WorkerMsg::Measuring { id, mono_ns } => {
                l.stream
                    .measuring(id.job, mono_ns.saturating_sub(l.base_mono_ns));
                Ok(())
            }
            WorkerMsg::Interval { id, sample, ramp } => match ramp {
                true => Ok(()),
                false => l.stream.interval(id.job, id.worker, sample),
            },
            WorkerMsg::Finished { id } => l.stream.finished(id.job, id.worker),
        };
        if let Err(e) = r {
            self.error.get_or_insert(e.to_string());
        }
    }

    /// The buffer to the file (after each batch of messages).
    pub fn flush(&mut self) {
        if let Some(l) = self.live.as_mut() {
            if let Err(e) = l.stream.flush() {
                self.error.get_or_insert(e.to_string());
            }
        }
    }

    /// Close the log: what the result records of it, and a note if writing
    /// failed.
    pub fn close(mut self) -> (IntervalLogRef, Option<String>) {
        self.flush();
        let file = self
            .path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let note = self.error.map(|e| {
            format!(
                "interval log {}: writing failed ({e}); its intervals end there",
                self.path.display()
            )
        });
        let r = IntervalLogRef {
            file,
            per_worker: self.per_worker,
        };
        (r, note)
    }
}
