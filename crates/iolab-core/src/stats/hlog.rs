//! Interval logs: a run's interval histograms streamed to disk as the run
//! goes, in HdrHistogram's interval log format (`.hlog`, V2 compressed
//! histograms in base64, `#[StartTime]`/`#[BaseTime]` headers, one `Tag=`
//! per job, host, direction and — when asked — worker), so HdrHistogram's
//! own tools and libraries read them, and a run killed at hour 20 keeps 20
//! hours of intervals.
//!
//! - [`HlogWriter`]: writes the header once, then each interval as one
//!   `#iolab-interval` comment (what a histogram cannot hold: the exact
//!   interval bounds in ns, I/O and byte counts per direction) followed by
//!   one histogram line per direction (total latency, ns). HdrHistogram
//!   readers skip the comment; iolab's reader pairs them.
//! - [`HlogReader`]: an iterator over the records of a log, one line at a
//!   time (memory does not grow with the log's length). A last line cut
//!   short (a run killed while writing it) ends the log there and sets
//!   [`HlogReader::truncated`]; a record whose histograms did not all
//!   arrive is dropped with it.
//! - `#iolab-end job=J intervals=N`: written when every worker of a job has
//!   finished, so a reader merging jobs interval by interval knows a job
//!   has no more intervals without reading to the end. A log without it
//!   for some job was interrupted.
//!
//! Timestamps in the histogram lines are seconds since `BaseTime` (the
//! run's start), to the millisecond as the format writes them; the exact
//! bounds (ns from the job's measured start) are in the comment.

use std::io::{self, BufRead, Write};
use std::time::{Duration, UNIX_EPOCH};

use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, LogEntry, Tag,
};
use hdrhistogram::serialization::V2DeflateSerializer;

use super::IntervalSample;
use crate::error::CoreError;
use crate::hist::PackedHist;
use crate::job::IoDir;

/// Format id, in the log's first comment line.
pub const HLOG_FORMAT: &str = "iolab.hlog/1";
/// The file name a run's interval log has beside its result.
pub const HLOG_FILE: &str = "intervals.hlog";

const HEADER: &str = "#[iolab: ";
const RECORD: &str = "#iolab-interval ";
const JOB_END: &str = "#iolab-end ";
const JOB: &str = "#iolab-job ";

/// Whose interval a record is: a job's workers merged (`worker: None`) or
/// one worker alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HlogSource {
    /// Index of the job in the run.
    pub job: u32,
    pub worker: Option<u32>,
}

/// One interval of one source.
#[derive(Debug, Clone, PartialEq)]
pub struct HlogRecord {
    pub source: HlogSource,
    /// 0-based index of the interval in the source's measured series.
    pub index: u64,
    /// Start of the job's measured window, ns after the log's base time.
    pub offset_ns: u64,
    /// Bounds relative to the job's measured start, as in the result.
    pub sample: IntervalSample,
}

/// What a log holds, in the order written.
#[derive(Debug, Clone, PartialEq)]
pub enum HlogEntry {
    Interval(HlogRecord),
    /// Every worker of `job` finished after `intervals` merged intervals.
    JobEnd {
        job: u32,
        intervals: u64,
    },
}

/// The log's header: what its timestamps count from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HlogHeader {
    /// `BaseTime` exactly (Unix ns).
    pub base_unix_ns: u64,
    pub interval_ns: u64,
}

/// The tag of a source's histogram lines: `job=NAME;host=HOST;dir=read`
/// (plus `;worker=N`). Characters the format forbids in a tag (`,`, space,
/// line breaks) and the separators `;` and `=` become `_`.
pub fn hlog_tag(job_name: &str, host: &str, worker: Option<u32>, dir: IoDir) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| match c {
                ',' | ' ' | '\r' | '\n' | ';' | '=' | '\t' => '_',
                c => c,
            })
            .collect()
    };
    let mut t = format!("job={};host={}", clean(job_name), clean(host));
    if let Some(w) = worker {
        t.push_str(&format!(";worker={w}"));
    }
    t.push_str(";dir=");
    t.push_str(dir.name());
    t
}

/// Writes an interval log (see the module docs).
#[allow(missing_debug_implementations)]
pub struct HlogWriter<W: Write> {
    out: W,
    ser: V2DeflateSerializer,
    base_unix_ns: u64,
}

impl<W: Write> HlogWriter<W> {
    /// Write the header: the format line, `StartTime` and `BaseTime` (both
    /// the run's start, `base_unix_ns`), `what` as a comment.
    pub fn begin(
        mut out: W,
        base_unix_ns: u64,
        interval_ns: u64,
        what: &str,
    ) -> io::Result<HlogWriter<W>> {
        let t = UNIX_EPOCH + Duration::from_nanos(base_unix_ns);
        let mut ser = V2DeflateSerializer::new();
        IntervalLogWriterBuilder::new()
            .add_comment(&format!(
                "[iolab: {HLOG_FORMAT} base_unix_ns={base_unix_ns} interval_ns={interval_ns}]"
            ))
            .add_comment(&format!("[{}]", what.replace('\n', " ")))
            .add_comment("[latency: total (lat) per I/O, ns; Interval_Max in ns]")
            .with_start_time(t)
            .with_base_time(t)
            .begin_log_with(&mut out, &mut ser)?;
        writeln!(
            out,
            "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\""
        )?;
        Ok(HlogWriter {
            out,
            ser,
            base_unix_ns,
        })
    }

    pub fn base_unix_ns(&self) -> u64 {
        self.base_unix_ns
    }

    /// One interval of `src`: its comment, then a histogram line per
    /// direction tagged `tags[d]` ([`hlog_tag`]). `offset_ns`: the job's
    /// measured start after the base time.
    pub fn interval(
        &mut self,
        src: HlogSource,
        tags: &[String],
        index: u64,
        offset_ns: u64,
        s: &IntervalSample,
    ) -> io::Result<()> {
        let join = |f: &dyn Fn(usize) -> u64| -> String {
            (0..s.dirs.len())
                .map(|d| f(d).to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        let worker = src.worker.map_or("-".to_string(), |w| w.to_string());
        writeln!(
            self.out,
            "{RECORD}job={} worker={worker} i={index} offset_ns={offset_ns} start_ns={} end_ns={} ios={} bytes={}",
            src.job,
            s.start_ns,
            s.end_ns,
            join(&|d| s.dirs[d].ios),
            join(&|d| s.dirs[d].bytes),
        )?;
        let start = Duration::from_nanos(offset_ns + s.start_ns);
        let len = Duration::from_nanos(s.end_ns.saturating_sub(s.start_ns));
        let mut w = IntervalLogWriterBuilder::new().begin_log_with(&mut self.out, &mut self.ser)?;
        for (d, tag) in s.dirs.iter().zip(tags) {
            let h = d.lat_ns.unpack();
            w.write_histogram(h.inner(), start, len, Tag::new(tag))
                .map_err(|e| io::Error::other(e.to_string()))?;
        }
        Ok(())
    }

    /// Job `job`'s name and worker count (once per job, after the header).
    pub fn job(&mut self, job: u32, workers: u32, name: &str) -> io::Result<()> {
        writeln!(
            self.out,
            "{JOB}job={job} workers={workers} name={}",
            name.replace('\n', " ")
        )
    }

    /// Every worker of `job` has finished, after `intervals` intervals.
    pub fn job_end(&mut self, job: u32, intervals: u64) -> io::Result<()> {
        writeln!(self.out, "{JOB_END}job={job} intervals={intervals}")
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }
}

/// Reads an interval log one line at a time (see the module docs).
#[allow(missing_debug_implementations)]
pub struct HlogReader<R: BufRead> {
    input: R,
    line: String,
    header: Option<HlogHeader>,
    /// A record whose histogram lines are still coming, and how many came.
    pending: Option<(HlogRecord, usize, usize)>,
    truncated: bool,
    line_no: u64,
    jobs: Vec<HlogJob>,
}

/// A job as the log names it (`#iolab-job` lines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HlogJob {
    pub job: u32,
    pub workers: u32,
    pub name: String,
}

impl<R: BufRead> HlogReader<R> {
    /// A reader; the header is read as the first records are.
    pub fn new(input: R) -> HlogReader<R> {
        HlogReader {
            input,
            line: String::new(),
            header: None,
            pending: None,
            truncated: false,
            line_no: 0,
            jobs: Vec::new(),
        }
    }

    /// The jobs named so far (all of them once the first record is read).
    pub fn jobs(&self) -> &[HlogJob] {
        &self.jobs
    }

    /// The header, once read (after the first call to `next`).
    pub fn header(&self) -> Option<HlogHeader> {
        self.header
    }

    /// The log ended in a line cut short or a record missing histograms:
    /// the run that wrote it was killed while writing.
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    fn bad(&self, what: impl std::fmt::Display) -> CoreError {
        CoreError::Format(format!("interval log line {}: {what}", self.line_no))
    }

    /// The next line, without its end; `None` at the end of the log or at
    /// a last line cut short (then `truncated`).
    fn next_line(&mut self) -> Result<Option<()>, CoreError> {
        self.line.clear();
        let n = self.input.read_line(&mut self.line)?;
        if n == 0 {
            return Ok(None);
        }
        self.line_no += 1;
        if !self.line.ends_with('\n') {
            self.truncated = true;
            return Ok(None);
        }
        self.line.truncate(self.line.trim_end().len());
        Ok(Some(()))
    }

    fn parse_record(&self, rest: &str) -> Result<(HlogRecord, usize), CoreError> {
        let mut r = HlogRecord {
            source: HlogSource {
                job: 0,
                worker: None,
            },
            index: 0,
            offset_ns: 0,
            sample: IntervalSample::default(),
        };
        let mut dirs = 0;
        let num = |v: &str| {
            v.parse::<u64>()
                .map_err(|_| self.bad(format!("not a number: {v:?}")))
        };
        let list = |v: &str| -> Result<Vec<u64>, CoreError> { v.split(',').map(num).collect() };
        for field in rest.split(' ') {
            let (k, v) = field
                .split_once('=')
                .ok_or_else(|| self.bad(format!("not key=value: {field:?}")))?;
            match k {
                "job" => r.source.job = num(v)? as u32,
                "worker" if v == "-" => r.source.worker = None,
                "worker" => r.source.worker = Some(num(v)? as u32),
                "i" => r.index = num(v)?,
                "offset_ns" => r.offset_ns = num(v)?,
                "start_ns" => r.sample.start_ns = num(v)?,
                "end_ns" => r.sample.end_ns = num(v)?,
                "ios" | "bytes" => {
                    let xs = list(v)?;
                    if xs.len() > r.sample.dirs.len() {
                        return Err(self.bad(format!(
                            "{} directions; this iolab knows {}",
                            xs.len(),
                            r.sample.dirs.len()
                        )));
                    }
                    dirs = xs.len();
                    for (d, x) in r.sample.dirs.iter_mut().zip(xs) {
                        if k == "ios" {
                            d.ios = x;
                        } else {
                            d.bytes = x;
                        }
                    }
                }
                _ => {} // fields of a later format are skipped
            }
        }
        Ok((r, dirs))
    }

    fn parse_header(&self, rest: &str) -> Result<HlogHeader, CoreError> {
        let rest = rest.trim_end_matches(']');
        let mut fields = rest.split(' ');
        let format = fields.next().unwrap_or("");
        if format != HLOG_FORMAT {
            return Err(self.bad(format!("format {format:?}; this iolab reads {HLOG_FORMAT}")));
        }
        let mut h = HlogHeader::default();
        for f in fields {
            match f.split_once('=') {
                Some(("base_unix_ns", v)) => h.base_unix_ns = v.parse().unwrap_or(0),
                Some(("interval_ns", v)) => h.interval_ns = v.parse().unwrap_or(0),
                _ => {}
            }
        }
        Ok(h)
    }

    /// A histogram line: fills the pending record's next direction.
    fn histogram_line(&mut self) -> Result<Option<HlogRecord>, CoreError> {
        // The format's parser wants each line's end.
        self.line.push('\n');
        let encoded = match IntervalLogIterator::new(self.line.as_bytes()).next() {
            Some(Ok(LogEntry::Interval(h))) => h.encoded_histogram().to_string(),
            _ => return Ok(None), // the legend, or a line not ours
        };
        let Some((mut rec, filled, dirs)) = self.pending.take() else {
            return Err(self.bad("a histogram without its #iolab-interval line"));
        };
        rec.sample.dirs[filled].lat_ns =
            PackedHist::from_v2_base64(&encoded).map_err(|e| self.bad(e))?;
        if filled + 1 == dirs {
            return Ok(Some(rec));
        }
        self.pending = Some((rec, filled + 1, dirs));
        Ok(None)
    }

    fn step(&mut self) -> Result<Option<HlogEntry>, CoreError> {
        loop {
            if self.next_line()?.is_none() {
                if self.pending.take().is_some() {
                    self.truncated = true;
                }
                return Ok(None);
            }
            let line = std::mem::take(&mut self.line);
            let out = self.entry(&line);
            self.line = line;
            if let Some(e) = out? {
                return Ok(Some(e));
            }
        }
    }

    fn entry(&mut self, line: &str) -> Result<Option<HlogEntry>, CoreError> {
        if let Some(rest) = line.strip_prefix(HEADER) {
            self.header = Some(self.parse_header(rest)?);
        } else if let Some(rest) = line.strip_prefix(RECORD) {
            if self.pending.is_some() {
                return Err(self.bad("an #iolab-interval line before the last one's histograms"));
            }
            let (rec, dirs) = self.parse_record(rest)?;
            if dirs == 0 {
                return Ok(Some(HlogEntry::Interval(rec)));
            }
            self.pending = Some((rec, 0, dirs));
        } else if let Some(rest) = line.strip_prefix(JOB) {
            let mut j = HlogJob {
                job: 0,
                workers: 0,
                name: String::new(),
            };
            let (head, name) = rest.split_once(" name=").unwrap_or((rest, ""));
            j.name = name.to_string();
            for f in head.split(' ') {
                match f.split_once('=') {
                    Some(("job", v)) => j.job = v.parse().map_err(|_| self.bad("bad job"))?,
                    Some(("workers", v)) => {
                        j.workers = v.parse().map_err(|_| self.bad("bad workers"))?
                    }
                    _ => {}
                }
            }
            self.jobs.push(j);
        } else if let Some(rest) = line.strip_prefix(JOB_END) {
            let (mut job, mut intervals) = (0, 0);
            for f in rest.split(' ') {
                match f.split_once('=') {
                    Some(("job", v)) => job = v.parse().map_err(|_| self.bad("bad job"))?,
                    Some(("intervals", v)) => {
                        intervals = v.parse().map_err(|_| self.bad("bad intervals"))?
                    }
                    _ => {}
                }
            }
            return Ok(Some(HlogEntry::JobEnd { job, intervals }));
        } else if !line.starts_with('#') && !line.is_empty() {
            self.line = line.to_string();
            let rec = self.histogram_line()?;
            return Ok(rec.map(HlogEntry::Interval));
        }
        Ok(None)
    }
}

impl<R: BufRead> Iterator for HlogReader<R> {
    type Item = Result<HlogEntry, CoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        let out = self.step().transpose();
        if self.header.is_none() {
            if let Some(Ok(_)) = out {
                return Some(Err(self.bad(format!("no {HLOG_FORMAT} header"))));
            }
        }
        out
    }
}
