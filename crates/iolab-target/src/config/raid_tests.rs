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
