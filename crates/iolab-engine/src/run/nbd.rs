//! Set-up of `ioengine=nbd` jobs, which have no files: one probe connection
//! per distinct URI learns the export's size and flags (for the notes, for
//! `size=`'s default, and to refuse a region past the export's end before
//! any worker starts).

use std::path::PathBuf;

use iolab_core::job::{NbdTarget, PreparedJob};

use crate::backend::nbd::handshake::disconnect;
use crate::backend::nbd::{connect, wire, ExportInfo};
use crate::layout::Region;
use crate::EngineError;

/// The exports of a run's nbd jobs, by URI.
#[derive(Debug, Default)]
pub struct Exports {
    found: Vec<(String, ExportInfo)>,
}

impl Exports {
    /// Connect once to every URI of the jobs; a note per export.
    pub fn probe(jobs: &[PreparedJob], notes: &mut Vec<String>) -> Result<Exports, EngineError> {
        let mut ex = Exports::default();
        for t in jobs.iter().filter_map(|j| j.nbd.as_ref()) {
            if ex.get(&t.uri).is_some() {
                continue;
            }
            let c = connect(t).map_err(|e| backend_err(e.to_string()))?;
            notes.push(note(t, &c.info));
            ex.found.push((t.uri.clone(), c.info));
            disconnect(c);
        }
        Ok(ex)
    }

    fn get(&self, uri: &str) -> Option<ExportInfo> {
        self.found.iter().find(|(u, _)| u == uri).map(|(_, i)| *i)
    }

    /// The region worker `worker` of `job` uses: `[offset, offset + size)`
    /// (offset moved by offset_increment per worker), `size` defaulting to
    /// the rest of the export.
    pub fn region(
        &self,
        job: &PreparedJob,
        worker: u32,
        t: &NbdTarget,
    ) -> Result<Region, EngineError> {
        let offset = job.offset_of_worker(worker);
        let info = self
            .get(&t.uri)
            .ok_or_else(|| EngineError::Lifecycle(format!("{} was not probed", t.uri)))?;
        let export = info.size_bytes;
        let place = format!("export '{}' at {} ({export} bytes)", t.export, t.uri);
        let len = match job.size {
            Some(size) => {
                let end = offset.checked_add(size).filter(|&e| e <= export);
                if end.is_none() {
                    return Err(backend_err(format!(
                        "job '{}' worker {worker}: offset={} (with offset_increment) + size={size} reaches past the end of {place}; use a smaller size=, offset= or offset_increment=",
                        job.name, offset
                    )));
                }
                size
            }
            None => match export.checked_sub(offset) {
                Some(len) if len > 0 => len,
                _ => {
                    return Err(backend_err(format!(
                        "job '{}': offset={} is not inside {place}; use a smaller offset=",
                        job.name, offset
                    )))
                }
            },
        };
        Ok(Region {
            path: PathBuf::from(&t.uri),
            start: offset,
            len,
        })
    }
}

fn backend_err(reason: String) -> EngineError {
    EngineError::Backend {
        engine: "nbd",
        reason,
    }
}

fn note(t: &NbdTarget, info: &ExportInfo) -> String {
    format!(
        "nbd: connected to {}, export '{}' size {} bytes, flags {}; {} connection(s) per worker",
        t.uri,
        t.export,
        info.size_bytes,
        wire::flag_names(info.flags).join("|"),
        t.connections
    )
}
