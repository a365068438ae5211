//! Host facts recorded with every result: host name, kernel, CPU model,
//! CPU count, memory. Read from uname(2), /proc/cpuinfo and /proc/meminfo;
//! a fact that cannot be read is left empty (0) rather than failing a run.

use iolab_core::stats::HostInfo;

/// Facts of this host; `name` overrides the host name when not empty (a
/// fleet rank reports the name it was planned under).
pub fn host_info(name: &str) -> HostInfo {
    HostInfo {
        hostname: host_name(name),
        kernel: uname().1,
        cpu_model: std::fs::read_to_string("/proc/cpuinfo")
            .map(|s| cpu_model(&s))
            .unwrap_or_default(),
        ncpus: online_cpus(),
        mem_bytes: std::fs::read_to_string("/proc/meminfo")
            .map(|s| mem_total_bytes(&s))
            .unwrap_or(0),
    }
}

/// `name` when not empty, else this host's name (uname's nodename).
pub fn host_name(name: &str) -> String {
    if name.is_empty() {
        uname().0
    } else {
        name.to_string()
    }
}

fn uname() -> (String, String) {
    // Safety: utsname is plain data; uname fills it with NUL-terminated strings.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // Safety: `u` is a valid, writable utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return (String::new(), String::new());
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    (field(&u.nodename), field(&u.release))
}

fn online_cpus() -> u32 {
    // Safety: sysconf with a valid name has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    n.max(0) as u32
}

/// The first "model name" of /proc/cpuinfo (x86), else "Processor" or
/// "cpu model" (arm, mips), else empty.
pub fn cpu_model(cpuinfo: &str) -> String {
    for key in ["model name", "Processor", "cpu model"] {
        let found = cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key).then(|| v.trim().to_string())
        });
        if let Some(v) = found {
            return v;
        }
    }
    String::new()
}

/// `MemTotal` of /proc/meminfo in bytes (the file says kB, meaning KiB).
pub fn mem_total_bytes(meminfo: &str) -> u64 {
    meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kib| kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_files() {
        let ci = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\nflags\t: fpu\n";
        assert_eq!(cpu_model(ci), "AMD EPYC 7B13");
        assert_eq!(cpu_model("nothing here"), "");
        assert_eq!(
            mem_total_bytes("MemTotal:       24576000 kB\nMemFree: 1 kB\n"),
            24_576_000 * 1024
        );
        let h = host_info("rank7");
        assert_eq!(h.hostname, "rank7");
        assert!(!host_name("").is_empty(), "uname names this host");
        assert!(h.ncpus >= 1 && h.mem_bytes > 0 && !h.kernel.is_empty());
    }
}
