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

/// The text docs/target.md gives `kind`: the table rows whose first cell
/// names it (`| `kind` | …`, `| `raid0`, `raid5` | …`) and any section
/// whose heading names it (`### `kind``), to the next heading of the same
/// or a higher level.
fn doc_text_about(doc: &str, kind: &str) -> String {
    let quoted = format!("`{kind}`");
    let first_cell_names_it = |line: &str| {
        let cells: Vec<&str> = line.splitn(3, '|').collect();
        line.starts_with('|') && cells.len() == 3 && cells[1].contains(&quoted)
    };
    let mut out = String::new();
    let mut in_section: Option<usize> = None;
    for line in doc.lines() {
        let level = line.chars().take_while(|&c| c == '#').count();
        if level > 0 && line[level..].starts_with(' ') {
            in_section = match in_section {
                Some(l) if level > l => Some(l),
                _ => line.contains(&quoted).then_some(level),
            };
        }
        if in_section.is_some() || first_cell_names_it(line) {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// docs/target.md names every key the parser accepts, read from the
/// parser's own tables — a backend, layer or key added later fails here
/// until it is documented — and its complete TOML example builds.
#[test]
fn docs_name_every_key_and_the_example_builds() {
    use super::build::{BACKENDS, LAYERS};
    use super::pacing::PACING_KEYS;
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/target.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let start = doc
        .find("\n## Configuration\n")
        .expect("a Configuration section");
    let end = doc[start + 1..]
        .find("\n## ")
        .map_or(doc.len(), |e| start + 1 + e);
    let config = &doc[start..end];
    let tables = [
        ("top-level", TOP_LEVEL_KEYS),
        ("[server]", SERVER_KEYS),
        ("pacing", PACING_KEYS),
        ("[[device]]", DEVICE_KEYS),
        ("[[export]]", EXPORT_KEYS),
        ("layer", LAYER_KEYS),
    ];
    for (what, keys) in tables {
        for k in keys {
            assert!(
                config.contains(&format!("`{k}`")),
                "docs/target.md, ## Configuration, does not name the {what} key `{k}`"
            );
        }
    }
    let pieces = BACKENDS.iter().map(|b| (b.name, b.keys));
    for (kind, keys) in pieces.chain(LAYERS.iter().map(|l| (l.name, l.keys))) {
        let text = doc_text_about(&doc, kind);
        for k in keys {
            assert!(
                text.contains(&format!("`{k}`")),
                "docs/target.md does not name key `{k}` of `{kind}` (in a table row \
                 whose first cell names `{kind}`, or a section whose heading does)"
            );
        }
    }
    let toml_at = config.find("```toml\n").expect("a TOML example") + 8;
    let example = &config[toml_at..toml_at + config[toml_at..].find("```").unwrap()];
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("ssd.img");
    let example = example.replace("/var/tmp/ssd.img", img.to_str().unwrap());
    let spec = parse_toml(&example).unwrap_or_else(|e| panic!("the docs' example: {e}"));
    let want = [
        "fast", "slow", "null0", "null1", "null2", "null3", "ram0", "ram1",
    ];
    assert_eq!(names(&spec), want);
    assert_eq!(spec.server.pacing.map(|p| p.buffers), Some(96));
}

#[test]
fn links_of_one_name_are_one_wire_across_exports() {
    let s = || ServerConfig::new("127.0.0.1:0".parse().unwrap());
    let specs = [
        "a=null,size=1m+stats,name=sa+link,name=w,bw=1g,lat=50us",
        "b=null,size=1m+link,name=w",
    ];
    let t = parse_compact(&specs, s()).unwrap();
    let b = t.exports.get(1).unwrap().dev().describe();
    assert!(b.starts_with("link(w,bw=1 GiB/s,lat=50us) <- null"), "{b}");
    let e = parse_compact(&[specs[0], "b=null,size=1m+link,name=w,bw=2g"], s())
        .unwrap_err()
        .to_string();
    assert!(e.contains("link 'w' is one wire"), "{e}");
    let e = parse_compact(&["a=null,size=1m+link,lat=1us"], s())
        .unwrap_err()
        .to_string();
    assert!(e.ends_with("(link).bw: missing (required)"), "{e}");
}
