//! Building the simulated disks (`sim-hdd`, `sim-ssd`) from their keys;
//! the keys, units and defaults are documented in stack/sim/hdd_mech.rs,
//! stack/sim/ssd.rs and docs/simulation.md.
//!
//! Rates are sizes per second (`rate_outer=90m` is 90 MiB/s), times are
//! durations with a unit, `wcache` is `on` or `off`. Data lives in memory,
//! or in a file with `path=` (created or reused, like the file backend).

use std::sync::Arc;

use super::params::Params;
use crate::error::TargetError;
use crate::stack::file::{FileDev, FileParams};
use crate::stack::memory::MemoryDev;
use crate::stack::sim::hdd::HddModel;
use crate::stack::sim::hdd_mech::{HddParams, Ns};
use crate::stack::sim::ssd::{SsdModel, SsdParams};
use crate::stack::sim::SimDev;
use crate::stack::{fmt_bytes, BlockDev};

/// Every key sim-hdd reads.
pub const HDD_KEYS: &[&str] = &[
    "size",
    "rpm",
    "seek_t2t",
    "seek_avg",
    "seek_full",
    "write_settle",
    "rate_outer",
    "rate_inner",
    "overhead",
    "iface",
    "cache",
    "segments",
    "wcache",
    "ncq",
    "seed",
    "path",
];

/// Every key sim-ssd reads.
pub const SSD_KEYS: &[&str] = &[
    "capacity",
    "op",
    "channels",
    "dies",
    "planes",
    "page",
    "pages_per_block",
    "t_read",
    "t_prog",
    "t_erase",
    "channel_rate",
    "buffer",
    "overhead",
    "mapped",
    "link_rate",
    "stage",
    "spill",
    "path",
];

fn ns(p: &mut Params, key: &'static str, default: Ns) -> Result<Ns, TargetError> {
    Ok(p.duration(key)?.map_or(default, |d| d.as_nanos() as Ns))
}

fn rate(p: &mut Params, key: &'static str, default: f64) -> Result<f64, TargetError> {
    match p.size(key)? {
        None => Ok(default),
        Some(0) => Err(p.err(key, "must be > 0 (bytes per second, e.g. 90m)")),
        Some(v) => Ok(v as f64),
    }
}

fn count(p: &mut Params, key: &'static str, default: u32) -> Result<u32, TargetError> {
    match p.uint(key)? {
        None => Ok(default),
        Some(v) => u32::try_from(v).map_err(|_| p.err(key, format!("{v} is too large"))),
    }
}

fn on_off(p: &mut Params, key: &'static str, default: bool) -> Result<bool, TargetError> {
    let Some(v) = p.string(key)? else {
        return Ok(default);
    };
    match v.to_ascii_lowercase().as_str() {
        "on" | "true" | "1" => Ok(true),
        "off" | "false" | "0" => Ok(false),
        _ => Err(p.err(key, format!("'{v}' is not on or off"))),
    }
}

/// The store underneath: a file at `path`, else memory.
fn store(p: &mut Params, size_bytes: u64) -> Result<Arc<dyn BlockDev>, TargetError> {
    match p.string("path")? {
        Some(path) => {
            let fp = FileParams {
                path: path.into(),
                size_bytes: Some(size_bytes),
                direct: false,
                read_only: false,
            };
            Ok(Arc::new(FileDev::open(fp).map_err(|m| p.err("path", m))?))
        }
        None => Ok(Arc::new(
            MemoryDev::new(size_bytes).map_err(|m| p.err("size", m))?,
        )),
    }
}

/// Build sim-hdd from its keys.
pub fn hdd(p: &mut Params) -> Result<Arc<dyn BlockDev>, TargetError> {
    let d = HddParams::default();
    let rpm = p.uint("rpm")?.map_or(d.rpm, |v| v as f64);
    let hp = HddParams {
        size_bytes: p.size("size")?.unwrap_or(d.size_bytes),
        rpm,
        seek_t2t_ns: ns(p, "seek_t2t", d.seek_t2t_ns)?,
        seek_avg_ns: ns(p, "seek_avg", d.seek_avg_ns)?,
        seek_full_ns: ns(p, "seek_full", d.seek_full_ns)?,
        write_settle_ns: ns(p, "write_settle", d.write_settle_ns)?,
        rate_outer_bytes_per_s: rate(p, "rate_outer", d.rate_outer_bytes_per_s)?,
        rate_inner_bytes_per_s: rate(p, "rate_inner", d.rate_inner_bytes_per_s)?,
        overhead_ns: ns(p, "overhead", d.overhead_ns)?,
        iface_bytes_per_s: rate(p, "iface", d.iface_bytes_per_s)?,
        cache_bytes: p.size("cache")?.unwrap_or(d.cache_bytes),
        segments: count(p, "segments", d.segments)?,
        wcache: on_off(p, "wcache", d.wcache)?,
        ncq_depth: count(p, "ncq", d.ncq_depth)?,
        seed: p.uint("seed")?.unwrap_or(d.seed),
    };
    hp.check().map_err(|(k, m)| p.err(k, m))?;
    let data = store(p, hp.size_bytes)?;
    let summary = format!(
        "{}, {} rpm, wcache={}, ncq={}",
        fmt_bytes(hp.size_bytes),
        hp.rpm,
        if hp.wcache { "on" } else { "off" },
        hp.ncq_depth
    );
    Ok(Arc::new(SimDev::new(
        "sim-hdd",
        summary,
        HddModel::new(hp),
        data,
    )))
}

/// Build sim-ssd from its keys.
pub fn ssd(p: &mut Params) -> Result<Arc<dyn BlockDev>, TargetError> {
    let d = SsdParams::default();
    let sp = SsdParams {
        capacity_bytes: p.size("capacity")?.unwrap_or(d.capacity_bytes),
        op: p.fraction("op")?.unwrap_or(d.op),
        channels: count(p, "channels", d.channels)?,
        dies: count(p, "dies", d.dies)?,
        planes: count(p, "planes", d.planes)?,
        page_bytes: p.size("page")?.unwrap_or(d.page_bytes),
        pages_per_block: count(p, "pages_per_block", d.pages_per_block)?,
        read_ns: ns(p, "t_read", d.read_ns)?,
        program_ns: ns(p, "t_prog", d.program_ns)?,
        erase_ns: ns(p, "t_erase", d.erase_ns)?,
        channel_bytes_per_s: rate(p, "channel_rate", d.channel_bytes_per_s)?,
        buffer_bytes: p.size("buffer")?.unwrap_or(d.buffer_bytes),
        overhead_ns: ns(p, "overhead", d.overhead_ns)?,
        mapped: on_off(p, "mapped", d.mapped)?,
        link_bytes_per_s: match p.size("link_rate")? {
            None => d.link_bytes_per_s,
            Some(0) => return Err(p.err("link_rate", "must be > 0 (bytes per second, e.g. 8m)")),
            Some(v) => Some(v as f64),
        },
        stage_bytes: p.size("stage")?.or(d.stage_bytes),
        spill: p.fraction("spill")?.unwrap_or(d.spill),
    };
    sp.check().map_err(|(k, m)| p.err(k, m))?;
    let data = store(p, sp.capacity_bytes)?;
    let mut summary = format!(
        "{}, op={}%, {}x{}x{}",
        fmt_bytes(sp.capacity_bytes),
        (sp.op * 100.0).round(),
        sp.channels,
        sp.dies,
        sp.planes
    );
    if let Some(r) = sp.link_bytes_per_s {
        summary += &format!(", link {}/s", fmt_bytes(r as u64));
    }
    if let Some(st) = sp.stage_bytes {
        summary += &format!(", stage {} spill {}", fmt_bytes(st), sp.spill);
    }
    Ok(Arc::new(SimDev::new(
        "sim-ssd",
        summary,
        SsdModel::new(sp),
        data,
    )))
}

#[cfg(test)]
mod tests {
    use crate::config::parse_compact;
    use crate::server::ServerConfig;
    use crate::stack::IoCtx;

    fn server() -> ServerConfig {
        ServerConfig::new(crate::config::DEFAULT_LISTEN.parse().unwrap())
    }

    fn err(spec: &str) -> String {
        parse_compact(&[spec], server()).unwrap_err().to_string()
    }

    fn parse(spec: &str) -> Result<(), String> {
        parse_compact(&[spec], server())
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn specs_build_the_disks_and_their_data_reads_back() {
        let spec = parse_compact(
            &[
                "d=sim-hdd,size=64g,wcache=off,seed=1",
                "s=sim-ssd,capacity=256m,op=28%",
            ],
            server(),
        )
        .unwrap();
        let d = spec.exports.get(0).unwrap();
        assert_eq!(d.caps().size_bytes, 64 << 30);
        assert!(d.caps().can_multi_conn);
        assert_eq!(
            d.dev().describe(),
            "sim-hdd(64 GiB, 7200 rpm, wcache=off, ncq=32) <- memory(64 GiB)"
        );
        let s = spec.exports.get(1).unwrap();
        assert!(s
            .dev()
            .describe()
            .starts_with("sim-ssd(256 MiB, op=28%, 8x4x2)"));
        for e in [d, s] {
            let mut ctx = IoCtx::new();
            e.dev()
                .write_at(&mut ctx, &[7u8; 4096], 8192, false)
                .unwrap();
            assert!(ctx.hold_until().is_some(), "every request takes time");
            let mut buf = [0u8; 4096];
            e.dev().read_at(&mut IoCtx::new(), &mut buf, 8192).unwrap();
            assert_eq!(buf, [7u8; 4096]);
        }
    }

    #[test]
    fn path_keeps_the_data_in_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let img = dir.path().join("hdd.img");
        let spec = format!("d=sim-hdd,size=16m,path={}", img.display());
        let spec = parse_compact(&[spec.as_str()], server()).unwrap();
        let d = spec.exports.get(0).unwrap();
        assert!(
            d.dev().describe().contains("<- file("),
            "{}",
            d.dev().describe()
        );
        d.dev()
            .write_at(&mut IoCtx::new(), &[9u8; 4096], 1 << 20, true)
            .unwrap();
        d.dev().flush(&mut IoCtx::new()).unwrap();
        let data = std::fs::read(&img).unwrap();
        assert_eq!(data.len(), 16 << 20);
        assert_eq!(&data[1 << 20..(1 << 20) + 4096], &[9u8; 4096][..]);
    }

    #[test]
    fn nonsense_is_refused_with_the_key_named() {
        let cases = [
            ("d=sim-hdd,wcache=maybe", "wcache: 'maybe' is not on or off"),
            ("d=sim-hdd,ncq=64", "ncq: 64 is not in 1..=32"),
            ("d=sim-hdd,seek_avg=30ms", "seek_avg"),
            (
                "d=sim-hdd,rate_inner=200m",
                "rate_inner: must be > 0 and <= rate_outer",
            ),
            ("d=sim-hdd,heads=4", "heads"),
            ("d=sim-ssd,op=0.001", "op: 0.001 is not in 0.01..=4"),
            ("d=sim-ssd,capacity=1g,op=2%", "too little spare for GC"),
            ("d=sim-ssd,page=3000", "page: must be a power of two"),
            ("d=sim-ssd,size=1g", "size"),
        ];
        for (spec, want) in cases {
            let e = err(spec);
            assert!(e.contains(want), "{spec}: {e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
    }

    /// The refusal names the least op and capacity that fit, and each fits.
    #[test]
    fn too_little_spare_names_the_op_and_capacity_that_fit() {
        let e = err("d=sim-ssd,capacity=1g,op=2%");
        assert!(e.contains("gives 2;"), "{e}");
        let op = e
            .split("raise op to ")
            .nth(1)
            .and_then(|r| r.split('%').next())
            .unwrap();
        let cap = e
            .split("capacity to ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .unwrap();
        assert!(
            parse(&format!("d=sim-ssd,capacity=1g,op={op}%")).is_ok(),
            "{e}"
        );
        assert!(
            parse(&format!("d=sim-ssd,capacity={cap}m,op=2%")).is_ok(),
            "{e}"
        );
        // 0.1 % less op, or one block per plane less capacity, does not fit.
        let less: f64 = op.parse::<f64>().unwrap() - 0.1;
        assert!(
            parse(&format!("d=sim-ssd,capacity=1g,op={less:.1}%")).is_err(),
            "{e}"
        );
        let less_cap = cap.parse::<u64>().unwrap() - 16;
        assert!(
            parse(&format!("d=sim-ssd,capacity={less_cap}m,op=2%")).is_err(),
            "{e}"
        );
        // Where no op up to 100 % fits, only capacity is offered.
        let e = err("d=sim-ssd,capacity=4m");
        assert!(
            e.contains("raise capacity to 384 MiB") && !e.contains("raise op"),
            "{e}"
        );
    }
}
