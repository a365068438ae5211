//! Building RAID arrays and the controller cache from parameters (keys
//! documented in stack/raid/: mod.rs, raid0/1/10/5.rs; and stack/cache.rs).
//!
//! A RAID level is a backend whose members are backends too, written as
//! one spec in the `member` key: `KIND` or `KIND(KEY=VALUE,…)`, e.g.
//! `member=sim-hdd(wcache=off)`. The compact command-line form keeps
//! commas and `+` inside parentheses together for this.

use std::sync::Arc;

use super::build;
use super::params::{Params, Value};
use crate::error::TargetError;
use crate::stack::cache::{CacheLayer, CacheParams, ReadPolicy, WritePolicy};
use crate::stack::raid::raid0::Striped;
use crate::stack::raid::raid1::raid1;
use crate::stack::raid::raid10::raid10;
use crate::stack::raid::raid5::Raid5;
use crate::stack::BlockDev;

/// Every key of a RAID level (raid1 refuses `strip` with its own message).
pub const RAID_KEYS: &[&str] = &["members", "member", "strip", "failed"];

/// Every key of the cache layer.
pub const CACHE_KEYS: &[&str] = &[
    "size",
    "write",
    "read",
    "ahead",
    "high_water",
    "stripe",
    "hit",
    "hit_rate",
    "miss",
];

/// The RAID levels, as backend kinds.
pub const LEVELS: [&str; 4] = ["raid0", "raid1", "raid10", "raid5"];

/// Build the RAID backend `level` from `p`.
pub fn raid(level: &str, p: &mut Params) -> Result<Arc<dyn BlockDev>, TargetError> {
    let n = p.uint("members")?;
    let n = p.required("members", n)?;
    if !(1..=64).contains(&n) {
        return Err(p.err("members", format!("{n} is not between 1 and 64")));
    }
    let spec = p.string("member")?;
    let spec = p.required("member", spec)?;
    let strip = if level == "raid1" {
        if p.has("strip") {
            return Err(p.err("strip", "raid1 does not stripe (no strip)"));
        }
        0
    } else {
        p.size("strip")?.unwrap_or(64 << 10)
    };
    let failed = p.list("failed")?.unwrap_or_default();
    let mut devs = Vec::new();
    for i in 0..n as usize {
        devs.push(member(p, &spec, i)?);
    }
    let bad = |m: String| {
        let key = if m.contains("strip") {
            "strip"
        } else {
            "members"
        };
        p.err(key, m)
    };
    let (dev, members): (Arc<dyn BlockDev>, _) = match level {
        "raid0" => {
            let r = Arc::new(Striped::raid0(devs, strip).map_err(bad)?);
            (
                r.clone(),
                Box::new(move |i| r.members.fail(i)) as Box<dyn Fn(usize)>,
            )
        }
        "raid1" => {
            let r = Arc::new(raid1(devs).map_err(bad)?);
            (
                r.clone(),
                Box::new(move |i| r.members.fail(i)) as Box<dyn Fn(usize)>,
            )
        }
        "raid10" => {
            let r = Arc::new(raid10(devs, strip).map_err(bad)?);
            (
                r.clone(),
                Box::new(move |i| r.members.fail(i)) as Box<dyn Fn(usize)>,
            )
        }
        _ => {
            let r = Arc::new(Raid5::new(devs, strip).map_err(bad)?);
            (
                r.clone(),
                Box::new(move |i| r.members.fail(i)) as Box<dyn Fn(usize)>,
            )
        }
    };
    let mut marked = Vec::new();
    for f in &failed {
        let i: usize = f
            .parse()
            .ok()
            .filter(|&i: &usize| (i as u64) < n)
            .ok_or_else(|| p.err("failed", format!("'{f}' is not a member index (0..{n})")))?;
        if !marked.contains(&i) {
            marked.push(i);
        }
    }
    let survivable = match level {
        "raid0" => 0,
        "raid5" => 1,
        "raid1" => n as usize - 1,
        _ => usize::MAX,
    };
    if marked.len() > survivable {
        return Err(p.err(
            "failed",
            format!(
                "{level} with {} failed members of {n} cannot serve data",
                marked.len()
            ),
        ));
    }
    if level == "raid10" && marked.iter().any(|i| marked.contains(&(i ^ 1))) {
        return Err(p.err("failed", "both members of a raid10 pair failed"));
    }
    marked.into_iter().for_each(members);
    Ok(dev)
}

/// Member `i` of the spec `KIND(KEY=VALUE,…)`, `{i}` replaced by `i`.
fn member(p: &Params, spec: &str, i: usize) -> Result<Arc<dyn BlockDev>, TargetError> {
    let spec = spec.trim();
    let (kind, inner) = match spec.split_once('(') {
        None => (spec, ""),
        Some((k, rest)) => match rest.strip_suffix(')') {
            Some(inner) => (k.trim(), inner),
            None => return Err(p.err("member", format!("'{spec}': missing ')'"))),
        },
    };
    if LEVELS.contains(&kind) {
        return Err(p.err("member", "a RAID member cannot be a RAID array here"));
    }
    let mut entries = Vec::new();
    for item in inner.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let Some((k, v)) = item.split_once('=') else {
            return Err(p.err("member", format!("'{item}' is not KEY=VALUE")));
        };
        let v = v.trim().replace("{i}", &i.to_string());
        entries.push((k.trim().to_string(), Value::Text(v)));
    }
    let path = format!("{}.member[{i}] ({kind})", p.path());
    let mut mp = Params::new(path, entries);
    if kind == "file" && !inner.contains("{i}") {
        return Err(p.err(
            "member",
            "every file member would be the same file: put {i} in its path",
        ));
    }
    let dev = build::backend(kind, &mut mp)?;
    mp.finish()?;
    Ok(dev)
}

/// The cache layer over `dev`.
pub fn cache(dev: Arc<dyn BlockDev>, p: &mut Params) -> Result<Arc<dyn BlockDev>, TargetError> {
    let d = CacheParams::default();
    let write = match p.string("write")?.as_deref() {
        None | Some("back") => WritePolicy::Back,
        Some("through") => WritePolicy::Through,
        Some(o) => return Err(p.err("write", format!("'{o}' is not back or through"))),
    };
    let read = match p.string("read")?.as_deref() {
        None | Some("none") => ReadPolicy::None,
        Some("ahead") => ReadPolicy::Ahead,
        Some("adaptive") => ReadPolicy::Adaptive,
        Some(o) => return Err(p.err("read", format!("'{o}' is not none, ahead or adaptive"))),
    };
    let cp = CacheParams {
        size_bytes: p.size("size")?.unwrap_or(d.size_bytes),
        write,
        read,
        ahead_bytes: p.size("ahead")?.unwrap_or(d.ahead_bytes),
        high_water: p.fraction("high_water")?.unwrap_or(d.high_water),
        stripe_bytes: p.size("stripe")?,
        hit: p.duration("hit")?.unwrap_or(d.hit),
        hit_bytes_per_s: p.size("hit_rate")?.unwrap_or(d.hit_bytes_per_s),
        miss: p.duration("miss")?.unwrap_or(d.miss),
    };
    if cp.ahead_bytes == 0 {
        return Err(p.err("ahead", "must be more than 0"));
    }
    let c = CacheLayer::new(dev, cp).map_err(|m| {
        let key = ["size", "high_water", "hit_rate"]
            .into_iter()
            .find(|k| m.contains(k))
            .unwrap_or("size");
        p.err(key, m)
    })?;
    Ok(Arc::new(c))
}

#[cfg(test)]
mod tests {
    //! Spec tests for RAID arrays and the cache: the forms that build, and
    //! one clear line for each kind of nonsense.

    use crate::config::{parse_compact, parse_toml};
    use crate::server::ServerConfig;
    use crate::stack::IoCtx;

    fn build(spec: &str) -> Result<String, String> {
        let s = ServerConfig::new("127.0.0.1:0".parse().unwrap());
        parse_compact(&[spec], s)
            .map(|t| t.exports.get(0).unwrap().dev().describe())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn compact_raid_specs_build() {
        let d = build(
            "r5=raid5,members=6,strip=64k,member=memory(size=64m)+cache,write=through,read=adaptive",
        )
        .unwrap();
        assert!(d.starts_with("cache(256 MiB,write=through,read=adaptive) <- raid5(320 MiB,strip=64 KiB) <- 6 x memory(64 MiB)"), "{d}");
        let d = build("m=raid1,members=2,member=memory(size=1m),failed=1").unwrap();
        assert!(d.contains("2 x memory(1 MiB), failed 1"), "{d}");
        let d = build("s=raid10,members=4,strip=4k,member=memory(size=1m)").unwrap();
        assert!(d.starts_with("raid10(2 MiB,strip=4 KiB)"), "{d}");
        let d = build("z=raid0,members=3,member=memory(size=1m)").unwrap();
        assert!(d.starts_with("raid0(3 MiB,strip=64 KiB)"), "{d}");
    }

    #[test]
    fn nonsense_is_refused_with_one_line_each() {
        for (spec, want) in [
            (
                "r=raid5,members=2,member=memory(size=1m)",
                "members: raid5 needs at least 3 members, got 2",
            ),
            (
                "r=raid5,members=3,strip=3000,member=memory(size=1m)",
                "strip: strip 3000 is not a power of two",
            ),
            (
                "r=raid5,members=3,strip=256,member=memory(size=1m)",
                "sector of 512 bytes",
            ),
            (
                "r=raid5,members=3,member=memory(size=1m,colour=red)",
                "member[0] (memory).colour: unknown key",
            ),
            (
                "r=raid5,members=3,member=memory(size=1m),speed=9",
                "speed: unknown key",
            ),
            (
                "r=raid5,members=3,member=memory",
                "member[0] (memory).size: missing",
            ),
            ("r=raid5,members=3,member=memory(size=1m", "missing ')'"),
            (
                "r=raid5,members=3,member=tape(size=1m)",
                "unknown backend 'tape'",
            ),
            (
                "r=raid5,members=3,member=memory(size=1m),failed=0:1",
                "2 failed members of 3",
            ),
            (
                "r=raid5,members=3,member=memory(size=1m),failed=7",
                "'7' is not a member index",
            ),
            (
                "r=raid0,members=2,member=memory(size=1m),failed=0",
                "1 failed members of 2",
            ),
            (
                "r=raid10,members=4,member=memory(size=1m),failed=2:3",
                "both members of a raid10 pair",
            ),
            (
                "r=raid10,members=5,member=memory(size=1m)",
                "multiple of 2 members",
            ),
            (
                "r=raid1,members=2,strip=64k,member=memory(size=1m)",
                "raid1 does not stripe",
            ),
            (
                "r=raid5,members=3,member=raid0(members=2)",
                "cannot be a RAID array",
            ),
            (
                "r=raid5,members=3,member=file(path=/tmp/x.img)",
                "put {i} in its path",
            ),
            (
                "r=raid5,members=3,member=memory(size=1m)+cache,write=sideways",
                "write: 'sideways' is not back or through",
            ),
            (
                "r=raid5,members=3,member=memory(size=1m)+cache,read=maybe",
                "read: 'maybe' is not none, ahead or adaptive",
            ),
            (
                "r=raid5,members=3,member=memory(size=1m)+cache,size=1k",
                "size: size 1024 is less than one 64 KiB line",
            ),
            (
                "r=raid5,members=3,member=memory(size=1m)+cache,dirty=1",
                "dirty: unknown key",
            ),
        ] {
            let e = build(spec).unwrap_err();
            assert!(e.contains(want), "{spec}: {e}");
            assert!(!e.contains('\n'), "{spec}: more than one line: {e}");
            assert!(e.starts_with("export[0] (r)"), "{spec}: {e}");
        }
    }

    #[test]
    fn toml_form_and_file_members_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let text = format!(
            r#"
            [[export]]
            name = "r5"
            backend = "raid5"
            members = 4
            strip = "4k"
            member = "file(path={}/m{{i}}.img,size=1m)"
            layers = [{{ type = "cache", write = "back", read = "ahead" }}]
            "#,
            dir.path().display()
        );
        let spec = parse_toml(&text).unwrap();
        let dev = spec.exports.get(0).unwrap().dev().clone();
        let data = vec![0x3cu8; 12 << 10];
        dev.write_at(&mut IoCtx::new(), &data, 4096, false).unwrap();
        dev.flush(&mut IoCtx::new()).unwrap();
        for i in 0..4 {
            assert!(dir.path().join(format!("m{i}.img")).exists());
        }
        let mut back = vec![0u8; 12 << 10];
        dev.read_at(&mut IoCtx::new(), &mut back, 4096).unwrap();
        assert_eq!(back, data);
    }
}
