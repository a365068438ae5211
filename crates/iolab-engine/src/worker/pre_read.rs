//! `pre_read`: before the run starts, a worker reads its region of each
//! of its files into the page cache, as fio's pre_read_files does (buffered
//! I/O only: the option layer refuses it with direct=1, and turns
//! `invalidate` off so nothing drops what was read). Neither its time nor
//! its bytes are the run's.

use std::os::unix::fs::FileExt;

use super::Worker;
use crate::backend::Backend;
use crate::EngineError;

/// Bytes per read: large enough that syscall cost is noise.
const CHUNK_BYTES: usize = 1 << 20;

impl<B: Backend> Worker<B> {
    /// Reads every region once, when the job asks (no file: nothing to do,
    /// as fio's no-I/O engines).
    pub(super) fn pre_read(&self) -> Result<(), EngineError> {
        if !self.p.pre_read {
            return Ok(());
        }
        let mut buf = vec![0u8; CHUNK_BYTES];
        for (i, (f, path)) in self._files.iter().zip(&self.paths).enumerate() {
            let region = self.src.gen.region(i);
            let mut pos = region.start;
            while pos < region.end {
                let n = (CHUNK_BYTES as u64).min(region.end - pos) as usize;
                match f.read_at(&mut buf[..n], pos) {
                    Ok(0) => break, // the file ends before the region: nothing more to cache
                    Ok(got) => pos += got as u64,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        return Err(EngineError::Io {
                            path: path.clone(),
                            op: "pre_read",
                            source: e,
                        })
                    }
                }
            }
        }
        Ok(())
    }
}
