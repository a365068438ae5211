//! zonemode=zbd across workers: every worker of a file, in every job of
//! the run, uses one table of write pointers (the first worker's), as fio's
//! jobs share a file's zones; strided zones are told where each file ends.
//! Done while the workers' specs are made.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use iolab_core::gen::ZoneTable;

use crate::layout::Layout;
use crate::worker::WorkerSpec;

/// The write pointers of each file with zonemode=zbd, by path.
pub(super) type ZoneTables = HashMap<PathBuf, Arc<ZoneTable>>;

/// Strided zones move on to the end of each file (fio's meaning), which
/// the layout knows.
pub(super) fn strided_file_ends(layout: &Layout, spec: &mut WorkerSpec) {
    for (i, path) in spec.paths.iter().enumerate() {
        if let Some(f) = layout.file(path) {
            spec.gen.set_file_end(i, f.size_bytes);
        }
    }
}

/// Give `spec`'s generator the table of each of its zoned files, or keep
/// its own as the table of a file seen for the first time.
pub(super) fn share_zones(tables: &mut ZoneTables, spec: &mut WorkerSpec) {
    share(tables, &spec.paths, &mut spec.gen);
}

fn share(tables: &mut ZoneTables, paths: &[PathBuf], gen: &mut iolab_core::gen::IoGen) {
    for (i, path) in paths.iter().enumerate() {
        match tables.get(path) {
            Some(t) => gen.share_zones(i, Arc::clone(t)),
            None => {
                if let Some(t) = gen.zone_table(i) {
                    tables.insert(path.clone(), t);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_core::gen::{FileRegion, IoGen};
    use iolab_core::job::JobSpec;

    #[test]
    fn workers_of_one_file_write_at_the_same_pointers() {
        let job = JobSpec::new("z")
            .args([
                "filename=/tmp/x",
                "size=256k",
                "zonemode=zbd",
                "zonesize=64k",
            ])
            .args(["rw=randwrite", "numjobs=2", "ioengine=null"])
            .prepare()
            .expect("job");
        let region = || {
            vec![FileRegion {
                start: 0,
                len: 256 * 1024,
            }]
        };
        let paths = vec![PathBuf::from("/tmp/x")];
        let mut tables = ZoneTables::new();
        let mut gens: Vec<IoGen> = (0..2)
            .map(|w| {
                let mut g = IoGen::new(&job, w, region()).expect("gen");
                share(&mut tables, &paths, &mut g);
                g
            })
            .collect();
        // Interleave the two workers: each write is at its zone's pointer,
        // whoever wrote there before.
        let mut wp = [0u64; 4];
        for i in 0..40 {
            let u = gens[i % 2].next().expect("a write");
            let z = (u.offset / (64 * 1024)) as usize;
            assert_eq!(
                u.offset % (64 * 1024),
                wp[z],
                "worker {} wrote off the pointer",
                i % 2
            );
            wp[z] += u.len;
        }
        assert_eq!(tables[&paths[0]].snapshot().wp_bytes, wp.to_vec());
    }
}
