//! Spawning a worker thread: pinning, opening the backend in the thread,
//! the ready / go handshake, dispatch on the job's engine, and turning a
//! panic into an error.

use std::path::Path;
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use iolab_core::job::{CpusAllowedPolicy, PreparedJob, SubmitMode};

use super::record::Recorder;
use super::{Control, Worker, WorkerId, WorkerMsg, WorkerOutcome, WorkerSpec};
use crate::backend::{self, Backend, WithBackend};
use crate::EngineError;

/// A spawned worker, waiting for its start instant.
#[derive(Debug)]
pub struct WorkerHandle {
    pub id: WorkerId,
    join: JoinHandle<WorkerOutcome>,
    ready: Receiver<Result<Vec<String>, EngineError>>,
    go: SyncSender<u64>,
}

impl WorkerHandle {
    /// Wait until the worker has opened its backend: its notes, or the
    /// set-up error.
    pub fn ready(&self) -> Result<Vec<String>, EngineError> {
        match self.ready.recv() {
            Ok(r) => r,
            Err(_) => Err(EngineError::Lifecycle(format!(
                "worker {}.{} ended during set-up (panicked)",
                self.id.job, self.id.worker
            ))),
        }
    }

    /// Start the worker's I/O at `start_mono_ns` (CLOCK_MONOTONIC).
    pub fn go(&self, start_mono_ns: u64) {
        // A worker that already ended has nothing to start; join says why.
        let _ = self.go.send(start_mono_ns);
    }

    pub fn is_finished(&self) -> bool {
        self.join.is_finished()
    }

    /// Wait for the end; a panic becomes an error, never an abort.
    pub fn join(self) -> WorkerOutcome {
        let WorkerHandle { id, join, go, .. } = self;
        drop(go); // a worker never started sees its go channel close and ends
        match join.join() {
            Ok(o) => o,
            Err(payload) => {
                let msg = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                WorkerOutcome {
                    error: Some(EngineError::Lifecycle(format!(
                        "worker {}.{} panicked: {msg}",
                        id.job, id.worker
                    ))),
                    ..Default::default()
                }
            }
        }
    }
}

/// The CPUs worker `i` of `job` may run on, from `cpus_allowed` and its
/// policy: `shared` = the whole set, `split` = the i-th CPU of the set
/// (wrapping when there are more workers than CPUs).
pub fn cpus_for_worker(job: &PreparedJob, i: u32) -> Result<Option<Vec<usize>>, EngineError> {
    let numa = match &job.engine.numa_cpu_nodes {
        Some(nodes) => Some(numa_cpus(Path::new(NODE_DIR), nodes)?),
        None => None,
    };
    let set: Vec<usize> = match (&job.cpus_allowed, numa) {
        (Some(a), Some(n)) => a.iter().copied().filter(|c| n.contains(c)).collect(),
        (Some(a), None) => a.clone(),
        (None, Some(n)) => n,
        (None, None) => return Ok(None),
    };
    if set.is_empty() {
        return Err(EngineError::Backend {
            engine: "cpus_allowed",
            reason: "cpus_allowed and numa_cpu_nodes leave no CPU to run on".into(),
        });
    }
    Ok(Some(match job.cpus_allowed_policy {
        CpusAllowedPolicy::Shared => set,
        CpusAllowedPolicy::Split => vec![set[i as usize % set.len()]],
    }))
}

/// Where Linux lists each NUMA node's CPUs (`nodeN/cpulist`).
const NODE_DIR: &str = "/sys/devices/system/node";

/// The CPUs of `nodes`, read from `dir/nodeN/cpulist`.
pub fn numa_cpus(dir: &Path, nodes: &[usize]) -> Result<Vec<usize>, EngineError> {
    let mut cpus = Vec::new();
    for n in nodes {
        let path = dir.join(format!("node{n}/cpulist"));
        let bad = |reason: String| EngineError::Backend {
            engine: "numa_cpu_nodes",
            reason: format!("node {n}: {reason}"),
        };
        let text = std::fs::read_to_string(&path).map_err(|e| {
            bad(format!(
                "cannot read {}: {e} (no such node?)",
                path.display()
            ))
        })?;
        if text.trim().is_empty() {
            continue; // a node with memory but no CPUs
        }
        cpus.extend(iolab_core::units::parse_cpu_list(text.trim()).map_err(bad)?);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

fn pin(cpus: &[usize]) -> Result<(), EngineError> {
    // Safety: cpu_set_t is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        if c >= libc::CPU_SETSIZE as usize {
            return Err(EngineError::Backend {
                engine: "cpus_allowed",
                reason: format!("CPU {c} is out of range"),
            });
        }
        // Safety: c < CPU_SETSIZE (checked above), so the bit is inside `set`.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // Safety: `set` is a valid cpu_set_t of the size passed; pid 0 = this thread.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        return Err(EngineError::Backend {
            engine: "cpus_allowed",
            reason: format!("cannot pin to CPUs {cpus:?}: {e} (are they online and allowed?)"),
        });
    }
    Ok(())
}

/// Spawn the worker thread; it opens its backend and waits for `go`.
pub fn spawn(
    spec: WorkerSpec,
    ctl: Arc<Control>,
    tx: Sender<WorkerMsg>,
) -> Result<WorkerHandle, EngineError> {
    let id = spec.id;
    let (ready_tx, ready) = mpsc::sync_channel(1);
    let (go, go_rx) = mpsc::sync_channel(1);
    let engine = spec.job.ioengine;
    let offload = spec.job.control.submit_mode == SubmitMode::Offload;
    let name = format!("iolab-w{}.{}", id.job, id.worker);
    let join = std::thread::Builder::new()
        .name(name)
        .spawn(move || {
            // The job was refused when prepared; this says so again rather
            // than run something else.
            if offload && engine.caps().offload_refused.is_some() {
                let _ = ready_tx.send(Err(EngineError::Lifecycle(format!(
                    "io_submit_mode=offload does not run ioengine={}",
                    engine.name()
                ))));
                return WorkerOutcome::default();
            }
            let start = Start {
                spec,
                ctl,
                tx,
                ready: ready_tx,
                go: go_rx,
            };
            // The one dispatch on the engine: the backend type the engine
            // table names (behind the offload pool under offload).
            backend::with_backend(engine, offload, start)
        })
        .map_err(|e| EngineError::Lifecycle(format!("cannot start a worker thread: {e}")))?;
    Ok(WorkerHandle {
        id,
        join,
        ready,
        go,
    })
}

/// What a worker thread starts with, until its backend type is known.
struct Start {
    spec: WorkerSpec,
    ctl: Arc<Control>,
    tx: Sender<WorkerMsg>,
    ready: SyncSender<Result<Vec<String>, EngineError>>,
    go: Receiver<u64>,
}

impl WithBackend for Start {
    type Output = WorkerOutcome;
    fn run<B: Backend>(self) -> WorkerOutcome {
        thread_main::<B>(self.spec, self.ctl, self.tx, self.ready, self.go)
    }
}

fn thread_main<B: Backend>(
    spec: WorkerSpec,
    ctl: Arc<Control>,
    tx: Sender<WorkerMsg>,
    ready: SyncSender<Result<Vec<String>, EngineError>>,
    go: Receiver<u64>,
) -> WorkerOutcome {
    let id = spec.id;
    let (create_only, lockmem) = (spec.job.worker.create_only, spec.job.worker.lockmem_bytes);
    if let Some(cpus) = &spec.cpus {
        if let Err(e) = pin(cpus) {
            let _ = ready.send(Err(e));
            return WorkerOutcome::default();
        }
    }
    // fio sets the thread's priority and memory policy before the engine
    // opens (the buffers, allocated by the run, are moved under the policy).
    let node_dir = std::path::Path::new("/sys/devices/system/node");
    let placed = super::placement::apply(
        &spec.job.worker.numa_mem_policy,
        &spec.bufs.regions(),
        node_dir,
    )
    .and_then(|()| match spec.job.prio.job_ioprio() {
        Some(v) => super::prio::set_thread_ioprio(v),
        None => Ok(()),
    })
    .and_then(|()| match spec.job.prio.realtime {
        true => super::prio::set_thread_realtime(),
        false => Ok(()),
    })
    .and_then(|()| match spec.job.prio.nice {
        0 => Ok(()),
        inc => super::prio::set_thread_nice(inc),
    });
    if let Err(e) = placed {
        let _ = ready.send(Err(e));
        return WorkerOutcome::default();
    }
    let cumulative = spec.cumulative.clone();
    let rec = Recorder::new(id, tx.clone(), spec.job.rate_limited(), spec.interval_ns)
        .keep_series(spec.keep_series)
        .cumulative(cumulative.clone());
    let (mut w, parts) = match Worker::<B>::new(spec, ctl, rec) {
        Ok(w) => w,
        Err(e) => {
            let _ = ready.send(Err(e));
            return WorkerOutcome::default();
        }
    };
    // fio pre-reads as the job sets up, before any job of the run starts.
    if let Err(e) = w.pre_read() {
        let _ = ready.send(Err(e));
        return WorkerOutcome::default();
    }
    let _ = ready.send(Ok(w.notes()));
    let Ok(start_ns) = go.recv() else {
        return WorkerOutcome::default(); // the run ended before this group started
    };
    // lockmem is held while the worker's group runs (fio locks it when the
    // job's thread starts), and released before the worker says it is done.
    let out = if create_only {
        w.without_io(parts, None)
    } else {
        match super::lockmem::LockedMem::new(lockmem) {
            Ok(locked) => {
                let out = w.run(start_ns, parts);
                drop(locked);
                out
            }
            Err(e) => w.without_io(parts, Some(e)),
        }
    };
    drop(w);
    if let Some(c) = cumulative {
        // The final result, for interim reports made after this worker ended.
        let mut last = out.result.clone();
        last.series.clear();
        let _ = c.send((id, Box::new(last)));
    }
    let _ = tx.send(WorkerMsg::Finished { id });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_core::job::JobSpec;

    #[test]
    fn numa_nodes_give_their_cpus_and_meet_cpus_allowed() {
        let dir = tempfile::tempdir().unwrap();
        for (node, list) in [("node0", "0-1\n"), ("node1", "4,6\n"), ("node2", "\n")] {
            std::fs::create_dir(dir.path().join(node)).unwrap();
            std::fs::write(dir.path().join(node).join("cpulist"), list).unwrap();
        }
        assert_eq!(numa_cpus(dir.path(), &[1, 0, 2]).unwrap(), vec![0, 1, 4, 6]);
        let e = numa_cpus(dir.path(), &[3]).unwrap_err().to_string();
        assert!(e.contains("node 3") && e.contains("no such node"), "{e}");
        // This host's node 0 always exists; with cpus_allowed only both count.
        let job = |opts: &[&str]| {
            JobSpec::new("n")
                .args(opts.iter().copied())
                .prepare()
                .unwrap()
        };
        let cpus0 = numa_cpus(Path::new(NODE_DIR), &[0]).unwrap();
        let j = job(&["size=1m", "numa_cpu_nodes=0"]);
        assert_eq!(cpus_for_worker(&j, 0).unwrap(), Some(cpus0.clone()));
        let j = job(&["size=1m", "numa_cpu_nodes=0", "cpus_allowed=0,9999"]);
        assert_eq!(cpus_for_worker(&j, 0).unwrap(), Some(vec![0]));
        let j = job(&["size=1m", "numa_cpu_nodes=0", "cpus_allowed=9999"]);
        assert!(cpus_for_worker(&j, 0)
            .unwrap_err()
            .to_string()
            .contains("no CPU"));
    }
}
