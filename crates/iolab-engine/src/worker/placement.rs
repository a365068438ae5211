//! fio's `numa_mem_policy` on a worker thread: set_mempolicy(2) for what the
//! thread allocates from now on, and mbind(2) with MPOL_MF_MOVE for its
//! I/O buffers, which the run allocated before the thread started (pages
//! already touched move to the policy's nodes). The nodes are checked
//! against /sys/devices/system/node/online first, so a node the host lacks
//! is a clear error rather than the kernel's EINVAL.

use std::path::Path;

use iolab_core::job::MemPolicy;

use crate::EngineError;

// linux/mempolicy.h (not in the libc crate).
const MPOL_DEFAULT: libc::c_int = 0;
const MPOL_PREFERRED: libc::c_int = 1;
const MPOL_BIND: libc::c_int = 2;
const MPOL_INTERLEAVE: libc::c_int = 3;
const MPOL_LOCAL: libc::c_int = 4;
const MPOL_MF_MOVE: libc::c_uint = 1 << 1;
/// Bits in the node mask passed to the kernel (MAX_NUMNODES is ≤ 1024).
const MASK_BITS: usize = 1024;

fn err(reason: String) -> EngineError {
    EngineError::Backend {
        engine: "numa_mem_policy",
        reason,
    }
}

/// The online nodes listed in `dir`/online (e.g. /sys/devices/system/node).
pub fn online_nodes(dir: &Path) -> Result<Vec<usize>, EngineError> {
    let path = dir.join("online");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        err(format!(
            "cannot read {}: {e} (is this a NUMA-capable Linux?)",
            path.display()
        ))
    })?;
    iolab_core::units::parse_cpu_list(text.trim())
        .map_err(|e| err(format!("{}: {e}", path.display())))
}

/// The kernel's (mode, nodes) for `p`, the nodes checked against `online`.
fn mode_and_nodes(
    p: &MemPolicy,
    online: &[usize],
) -> Result<(libc::c_int, Vec<usize>), EngineError> {
    let (mode, nodes) = match p {
        MemPolicy::Inherit | MemPolicy::Default => (MPOL_DEFAULT, Vec::new()),
        MemPolicy::Local => (MPOL_LOCAL, Vec::new()),
        MemPolicy::Prefer(n) => (MPOL_PREFERRED, vec![*n]),
        MemPolicy::Bind(v) if v.is_empty() => (MPOL_BIND, online.to_vec()),
        MemPolicy::Bind(v) => (MPOL_BIND, v.clone()),
        MemPolicy::Interleave(v) if v.is_empty() => (MPOL_INTERLEAVE, online.to_vec()),
        MemPolicy::Interleave(v) => (MPOL_INTERLEAVE, v.clone()),
    };
    if let Some(bad) = nodes.iter().find(|n| !online.contains(n)) {
        return Err(err(format!(
            "NUMA node {bad} is not online on this host (online nodes: {online:?}); \
             see numactl --hardware"
        )));
    }
    Ok((mode, nodes))
}

fn mask_of(nodes: &[usize]) -> Vec<libc::c_ulong> {
    let bits = libc::c_ulong::BITS as usize;
    let mut mask = vec![0 as libc::c_ulong; MASK_BITS / bits];
    for &n in nodes {
        mask[n / bits] |= 1 << (n % bits);
    }
    mask
}

/// Applies `p` to the calling thread and moves `buffers` (address, length)
/// under it. `Inherit` does nothing.
pub fn apply(
    p: &MemPolicy,
    buffers: &[(*mut u8, usize)],
    node_dir: &Path,
) -> Result<(), EngineError> {
    if *p == MemPolicy::Inherit {
        return Ok(());
    }
    let online = online_nodes(node_dir)?;
    let (mode, nodes) = mode_and_nodes(p, &online)?;
    let mask = mask_of(&nodes);
    let (mask_ptr, maxnode) = if nodes.is_empty() {
        (std::ptr::null(), 0)
    } else {
        (mask.as_ptr(), MASK_BITS as libc::c_ulong + 1)
    };
    // Safety: `mask` outlives the call and holds MASK_BITS bits (maxnode - 1).
    let r = unsafe { libc::syscall(libc::SYS_set_mempolicy, mode, mask_ptr, maxnode) };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        return Err(err(format!("set_mempolicy({p:?}) failed: {e}")));
    }
    let page = 4096usize;
    for &(ptr, len) in buffers {
        let start = ptr as usize & !(page - 1);
        let end = (ptr as usize + len).div_ceil(page) * page;
        // Safety: the range covers the worker's own buffers (rounded out to
        // pages); mbind changes only their placement, never their contents.
        let r = unsafe {
            libc::syscall(
                libc::SYS_mbind,
                start as *mut libc::c_void,
                end - start,
                mode,
                mask_ptr,
                maxnode,
                MPOL_MF_MOVE,
            )
        };
        if r != 0 {
            let e = std::io::Error::last_os_error();
            return Err(err(format!("mbind of the I/O buffers ({p:?}) failed: {e}")));
        }
    }
    Ok(())
}

/// The calling thread's policy mode and its node mask's first word
/// (get_mempolicy(2)), for tests and checks.
pub fn thread_policy() -> std::io::Result<(libc::c_int, libc::c_ulong)> {
    let mut mode: libc::c_int = -1;
    let mut mask = [0 as libc::c_ulong; MASK_BITS / libc::c_ulong::BITS as usize];
    // Safety: both out-pointers are valid; maxnode matches the mask's size.
    let r = unsafe {
        libc::syscall(
            libc::SYS_get_mempolicy,
            &mut mode as *mut libc::c_int,
            mask.as_mut_ptr(),
            MASK_BITS as libc::c_ulong,
            std::ptr::null_mut::<libc::c_void>(),
            0 as libc::c_ulong,
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((mode, mask[0]))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NODES: &str = "/sys/devices/system/node";

    #[test]
    fn bind_and_interleave_set_the_threads_policy() {
        std::thread::spawn(|| {
            let mut buf = vec![7u8; 3 * 4096];
            let regions = [(buf.as_mut_ptr(), buf.len())];
            apply(&MemPolicy::Bind(vec![0]), &regions, Path::new(NODES)).unwrap();
            assert_eq!(thread_policy().unwrap(), (MPOL_BIND, 1));
            apply(&MemPolicy::Interleave(vec![]), &regions, Path::new(NODES)).unwrap();
            assert_eq!(thread_policy().unwrap().0, MPOL_INTERLEAVE);
            apply(&MemPolicy::Local, &regions, Path::new(NODES)).unwrap();
            assert_eq!(thread_policy().unwrap().0, MPOL_LOCAL);
            assert!(
                buf.iter().all(|&b| b == 7),
                "placement never changes contents"
            );
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_node_the_host_lacks_is_named() {
        let e = apply(&MemPolicy::Bind(vec![0, 1000]), &[], Path::new(NODES)).unwrap_err();
        assert!(
            e.to_string().contains("NUMA node 1000 is not online"),
            "{e}"
        );
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("online"), "0-1\n").unwrap();
        let (mode, nodes) = mode_and_nodes(
            &MemPolicy::Interleave(vec![]),
            &online_nodes(dir.path()).unwrap(),
        )
        .unwrap();
        assert_eq!((mode, nodes), (MPOL_INTERLEAVE, vec![0, 1]));
    }
}
