use super::*;
use crate::stack::IoCtx;
use std::time::{Duration, Instant};

fn err(text: &str) -> String {
    parse_toml(text).unwrap_err().to_string()
}

fn names(spec: &TargetSpec) -> Vec<String> {
    spec.exports.iter().map(|e| e.name().to_string()).collect()
}

#[test]
fn seed_004_stack_one_file_split_in_3_with_a_delay_on_one_part() {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("ssd.img");
    let text = format!(
        r#"
        [server]
        listen = "unix:{sock}"
        max_connections = 8
        max_request_bytes = "1m"
        handshake_timeout = "5s"

        [[device]]
        name = "ssd"
        backend = "file"
        path = "{img}"
        size = "3m"
        split = 3
        layers = [{{ type = "stats" }}]

        [[export]]
        name = "fast0"
        device = "ssd"
        part = 0

        [[export]]
        name = "slow"
        device = "ssd"
        part = 1
        description = "1 ms per read"
        layers = [{{ type = "delay", read = "1ms", write = "1ms" }}]
        "#,
        sock = dir.path().join("s").display(),
        img = img.display()
    );
    let spec = parse_toml(&text).unwrap();
    assert_eq!(spec.server.max_connections, 8);
    assert_eq!(spec.server.max_request_bytes, 1 << 20);
    assert_eq!(spec.server.handshake_timeout, Duration::from_secs(5));
    assert_eq!(names(&spec), ["fast0", "slow"]);
    assert_eq!(spec.layer_stats.len(), 1);
    assert_eq!(spec.layer_stats[0].0, "ssd");
    let slow = spec.exports.get(1).unwrap();
    assert_eq!(slow.caps().size_bytes, 1 << 20);
    assert_eq!(slow.description(), "1 ms per read");
    let mut ctx = IoCtx::new();
    let t0 = Instant::now();
    slow.dev().read_at(&mut ctx, &mut [0u8; 512], 0).unwrap();
    assert!(ctx.hold_until().unwrap() >= t0 + Duration::from_millis(1));
    assert!(slow.dev().describe().contains("split(part 1 of 3"));
    assert!(std::fs::metadata(&img).unwrap().len() == 3 << 20);
}

#[test]
fn count_makes_numbered_exports_with_a_backend_each() {
    let spec = parse_toml(
        r#"
        [[export]]
        name = "null"
        backend = "null"
        size = "1g"
        count = 16
        layers = [{ type = "stats" }]
        "#,
    )
    .unwrap();
    assert_eq!(spec.exports.len(), 16);
    assert_eq!(names(&spec)[15], "null15");
    assert_eq!(spec.layer_stats[3].0, "null3");
    assert_eq!(spec.server.listen, DEFAULT_LISTEN.parse().unwrap());
}

#[test]
fn compact_specs_build_the_same_stacks() {
    let server = ServerConfig::new("127.0.0.1:0".parse().unwrap());
    let spec = parse_compact(
        &[
            "disk0=memory,size=1g,read_only=1+delay,read=1ms,read_tail=10ms,tail_rate=1%",
            "p=memory,size=3m,split=3+inject,rate=0.5,ops=read:write+stats,name=io",
        ],
        server,
    )
    .unwrap();
    assert_eq!(names(&spec), ["disk0", "p0", "p1", "p2"]);
    let d = spec.exports.get(0).unwrap();
    assert!(d.is_read_only());
    assert!(
        d.dev()
            .describe()
            .starts_with("delay(read=1ms,read_tail=10ms@1%) <- memory(1 GiB)"),
        "{}",
        d.dev().describe()
    );
    let names: Vec<&str> = spec.layer_stats.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["io0", "io1", "io2"]);
}

#[test]
fn errors_name_the_key_path() {
    let e = err("[[export]]\nname = \"d\"\nbackend = \"memory\"\nsize = \"1g\"\nlayers = [{ type = \"delay\", read = \"1\" }]");
    assert_eq!(
        e,
        "export[0] (d).layers[0] (delay).read: '1' has no unit; write e.g. 1us or 1ms"
    );
    // A misspelt key is named as unknown, not as the key it left missing.
    let e = err("[[export]]\nname = \"d\"\nbackend = \"memory\"\nsise = \"1g\"");
    assert_eq!(e, "export[0] (d).sise: unknown key (known here: size)");
    let e = err("[[export]]\nname = \"d\"\nbackend = \"memory\"");
    assert!(e.starts_with("export[0] (d).size: missing"), "{e}");
    let e = err("[[export]]\nname = \"d\"\nbackend = \"memory\"\nsize = \"1g\"\nsise = 1");
    assert!(
        e.starts_with("export[0] (d).sise: unknown key (known here:"),
        "{e}"
    );
    let e = err("[[export]]\nname = \"d\"\nbackend = \"tape\"");
    assert!(
        e.contains("export[0] (d).backend: unknown backend 'tape'"),
        "{e}"
    );
    let e = err("[[export]]\nname = \"d\"\nbackend = \"null\"\nsize = 4096\nlayers = [{ type = \"pacing\" }]");
    assert!(e.contains("layers[0] (pacing).type: unknown layer"), "{e}");
    let e = err("[[export]]\nname = \"d\"\ndevice = \"x\"");
    assert!(
        e.contains("export[0] (d).device: no [[device]] named 'x'"),
        "{e}"
    );
    let e = err("[server]\nlisten = \"0.0.0.0:10809\"\nworkers = \"many\"");
    assert!(e.starts_with("server.workers:"), "{e}");
    let e = err("[[export]]\nname = \"d\"\nbackend = \"memory\"\nsize = \"1g\"\nlayers = [{ type = \"delay\" }]");
    assert!(e.contains("every delay is 0"), "{e}");
    assert!(err("[exports]").contains("unknown top-level key"));
    assert!(
        err("[[export]]\nname = ").contains("line"),
        "TOML syntax errors carry the position"
    );
}

#[test]
fn device_and_part_rules() {
    let base = "[[device]]\nname = \"m\"\nbackend = \"memory\"\nsize = \"4m\"\nsplit = 2\n";
    let e = err(&format!("{base}[[export]]\nname = \"e\"\ndevice = \"m\""));
    assert!(e.contains("part: missing: device 'm' is split in 2"), "{e}");
    let e = err(&format!(
        "{base}[[export]]\nname = \"e\"\ndevice = \"m\"\npart = 2"
    ));
    assert!(e.contains("2 is not a part"), "{e}");
    let e = err(&format!(
        "{base}[[export]]\nname = \"e\"\ndevice = \"m\"\nbackend = \"null\""
    ));
    assert!(e.contains("either device or backend"), "{e}");
    let e = err("[[export]]\nname = \"f\"\nbackend = \"file\"\npath = \"/tmp/x\"\ncount = 2");
    assert!(e.contains("cannot be repeated"), "{e}");
    let ok = parse_toml(&format!(
        "{base}[[export]]\nname = \"e\"\ndevice = \"m\"\npart = 1\nread_only = true"
    ))
    .unwrap();
    assert!(ok.exports.get(0).unwrap().is_read_only());
}

#[test]
fn compact_syntax_errors() {
    let s = || ServerConfig::new("127.0.0.1:0".parse().unwrap());
    for bad in [
        "disk0",
        "d=memory,size",
        "d=+delay",
        "d=memory,size=1k+,read=1ms",
    ] {
        let e = parse_compact(&[bad], s()).unwrap_err().to_string();
        assert!(e.starts_with("export[0]"), "{bad}: {e}");
    }
}

#[test]
fn compact_specs_name_unknown_keys_and_a_missing_export_name() {
    let s = || ServerConfig::new("127.0.0.1:0".parse().unwrap());
    let e = |spec: &str| parse_compact(&[spec], s()).unwrap_err().to_string();
    assert_eq!(
        e("d=memory,size=1m+delay,raed=1ms"),
        "export[0] (d).layers[0] (delay).raed: unknown key (known here: flush, read, \
         read_tail, seed, tail_rate, write, write_tail)"
    );
    assert_eq!(
        e("memory,size=1m"),
        "export[0]: 'memory,size=1m': the export name is missing: write \
         NAME=memory,size=1m (e.g. disk=memory,size=1m)"
    );
    assert!(e("m=memory,size=1m+delay").contains("every delay is 0"));
}
