//! The target's import rules (docs/architecture.md, "Rust: the target's
//! imports"), checked on the source as tests/test_import_direction.py
//! checks Python's: the block stack reaches nothing above it, and the
//! crate's top-level modules import each other one way (no cycle).
//!
//! The checker reads `src/` from `lib.rs` down through its `mod`
//! declarations, so it knows each file's module path, and collects the
//! crate paths each file names: `crate::X`, `crate::{X, …}`, `super::…`
//! resolved against the file's module, and the crate root's re-exports
//! (`crate::ServerConfig` is `server_config`). Test code is not the
//! crate's structure and is left out: files declared under `#[cfg(test)]`,
//! and a file's `#[cfg(test)] mod … { … }` block (rustfmt's layout: it
//! ends at the first `}` in column 0). Comment lines are not imports.
//! The checker is shown failing on synthetic trees with a violation.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// What a top-level module may import from the crate, besides itself.
/// The same table is written in docs/architecture.md; a test compares them.
const RULES: &[(&str, &[&str])] = &[
    ("op", &[]),
    ("measure", &["op"]),
    ("stack", &["op", "measure", "proto", "buf"]),
];

/// What the stack must never import, by name (issue 22): the allow-list
/// above already shuts them out; this list keeps the rule's intent.
const ABOVE_THE_STACK: &[&str] = &["config", "server", "server_config", "http", "lab"];

/// One crate path a file names.
#[derive(Debug, Clone)]
struct Use {
    file: String,
    line: usize,
    /// The top-level module it leads to.
    to: String,
}

/// Every source file of the crate's non-test code: its module path and text.
fn modules(src: &Path) -> Vec<(Vec<String>, PathBuf, String)> {
    let mut out = Vec::new();
    let mut todo = vec![(Vec::<String>::new(), src.join("lib.rs"))];
    while let Some((path, file)) = todo.pop() {
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("read {}: {e}", file.display()));
        let text = without_tests(&text);
        // A `mod x;` in lib.rs or mod.rs is `x.rs` beside it; in `y.rs`, `y/x.rs`.
        let dir = match file.file_name().and_then(|n| n.to_str()) {
            Some("lib.rs" | "mod.rs") => file.parent().unwrap().to_path_buf(),
            _ => file.with_extension(""),
        };
        for name in declared_modules(&text) {
            let flat = dir.join(format!("{name}.rs"));
            let child = if flat.exists() {
                flat
            } else {
                dir.join(&name).join("mod.rs")
            };
            let mut p = path.clone();
            p.push(name);
            todo.push((p, child));
        }
        out.push((path, file, text));
    }
    out
}

/// The file's text with its test blocks blanked (line numbers kept).
fn without_tests(text: &str) -> String {
    let mut out = Vec::new();
    let (mut cfg_test, mut in_block) = (false, false);
    for line in text.lines() {
        if in_block {
            in_block = line != "}";
            out.push("");
            continue;
        }
        let t = line.trim();
        if cfg_test && (t.starts_with("mod ") || t.starts_with("pub(crate) mod ")) {
            // An out-of-line test module is dropped with its declaration.
            in_block = t.ends_with('{');
            out.push("");
            cfg_test = false;
            continue;
        }
        cfg_test = t == "#[cfg(test)]";
        out.push(if t.starts_with("//") { "" } else { line });
    }
    out.join("\n")
}

/// Names of the modules a file declares out of line (`mod x;`).
fn declared_modules(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let t = l.trim();
            let t = t
                .strip_prefix("pub(crate) ")
                .or_else(|| t.strip_prefix("pub(super) "))
                .or_else(|| t.strip_prefix("pub "))
                .unwrap_or(t);
            let name = t.strip_prefix("mod ")?.strip_suffix(';')?;
            Some(name.trim().to_string())
        })
        .collect()
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The first names of a `{a::b, c, d::{e, f}}` group (after its `{`).
fn group_heads(s: &str) -> Vec<&str> {
    let (mut depth, mut heads, mut start) = (0usize, Vec::new(), true);
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => start = true,
            c if start && (c.is_ascii_alphanumeric() || c == '_') => {
                heads.push(ident_at(&s[i..]));
                start = false;
            }
            _ => {}
        }
    }
    heads
}

/// The crate paths of one file, as top-level modules (`reexports` maps the
/// root's re-exported names to their modules).
fn uses_of(
    module: &[String],
    file: &str,
    text: &str,
    reexports: &HashMap<String, String>,
) -> Vec<Use> {
    let mut out = Vec::new();
    let top = |name: &str| {
        reexports
            .get(name)
            .cloned()
            .unwrap_or_else(|| name.to_string())
    };
    for (n, line) in text.lines().enumerate() {
        let mut found = |to: String| {
            out.push(Use {
                file: file.to_string(),
                line: n + 1,
                to,
            })
        };
        for (i, _) in line.match_indices("crate::") {
            if i > 0 && line[..i].ends_with('$') {
                continue;
            }
            let rest = &line[i + "crate::".len()..];
            match rest.strip_prefix('{') {
                Some(group) => group_heads(group).into_iter().for_each(|h| found(top(h))),
                None if !ident_at(rest).is_empty() => found(top(ident_at(rest))),
                None => {}
            }
        }
        for (i, _) in line.match_indices("super::") {
            // Count the whole `super::super::…` chain once, from its start.
            if line[..i].ends_with("super::") {
                continue;
            }
            let mut rest = &line[i..];
            let mut up = 0;
            while let Some(r) = rest.strip_prefix("super::") {
                rest = r;
                up += 1;
            }
            let at: Vec<&String> = module
                .iter()
                .take(module.len().saturating_sub(up))
                .collect();
            let heads = match rest.strip_prefix('{') {
                Some(group) => group_heads(group),
                None => vec![ident_at(rest)],
            };
            for h in heads.into_iter().filter(|h| !h.is_empty()) {
                found(match at.first() {
                    Some(m) => m.to_string(),
                    None => top(h),
                });
            }
        }
    }
    out
}

/// The crate root's `pub use m::{A, B};` lines: name -> module.
fn root_reexports(lib: &str) -> HashMap<String, String> {
    let mut map = HashMap::new();
    for l in lib.lines() {
        let Some(rest) = l.trim().strip_prefix("pub use ") else {
            continue;
        };
        let Some((m, names)) = rest.split_once("::") else {
            continue;
        };
        let names = names.trim_end_matches(';');
        let names = names.trim_start_matches('{').trim_end_matches('}');
        for n in names.split(',') {
            map.insert(n.trim().to_string(), m.trim().to_string());
        }
    }
    map
}

/// Every crate path of the tree under `src`, by the file's top-level module.
fn crate_uses(src: &Path) -> Vec<(String, Use)> {
    let mods = modules(src);
    let lib = &mods.iter().find(|(p, _, _)| p.is_empty()).unwrap().2;
    let reexports = root_reexports(lib);
    let mut out = Vec::new();
    for (path, file, text) in &mods {
        let Some(from) = path.first() else { continue };
        let rel = file.strip_prefix(src).unwrap_or(file).display().to_string();
        for u in uses_of(path, &rel, text, &reexports) {
            if &u.to != from {
                out.push((from.clone(), u));
            }
        }
    }
    out
}

/// The rules' violations and the import cycles among top-level modules,
/// one line each (empty: the tree keeps the rules).
fn violations(src: &Path) -> Vec<String> {
    let uses = crate_uses(src);
    let mut bad = Vec::new();
    for (from, u) in &uses {
        if let Some((_, may)) = RULES.iter().find(|(m, _)| m == from) {
            if !may.contains(&u.to.as_str()) {
                bad.push(format!(
                    "src/{}:{}: `{from}` imports `{}`; it may import only {may:?}",
                    u.file, u.line, u.to
                ));
            }
        }
    }
    bad.sort();
    let mut graph: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (from, u) in &uses {
        graph.entry(from).or_default().insert(&u.to);
    }
    bad.extend(cycles(&graph).into_iter().map(|c| {
        let first = uses
            .iter()
            .find(|(f, u)| f == c[0] && u.to == c[1])
            .map(|(_, u)| format!("src/{}:{}", u.file, u.line))
            .unwrap_or_default();
        format!("import cycle {} (first edge at {first})", c.join(" -> "))
    }));
    bad
}

/// Import cycles, as `a -> b -> … -> a`: for each module on none found
/// yet, the shortest cycle through it, if any.
fn cycles<'a>(graph: &BTreeMap<&'a str, BTreeSet<&'a str>>) -> Vec<Vec<&'a str>> {
    let mut found: Vec<Vec<&str>> = Vec::new();
    for &start in graph.keys() {
        if found.iter().any(|c| c.contains(&start)) {
            continue;
        }
        // Shortest way back to `start`, breadth first.
        let mut prev: HashMap<&str, &str> = HashMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        while let Some(n) = queue.pop_front() {
            for &m in graph.get(n).into_iter().flatten() {
                if m == start {
                    let mut path = vec![start];
                    let mut at = n;
                    while at != start {
                        path.insert(1, at);
                        at = prev[at];
                    }
                    path.push(start);
                    found.push(path);
                    queue.clear();
                    break;
                }
                if m != start && !prev.contains_key(m) {
                    prev.insert(m, n);
                    queue.push_back(m);
                }
            }
        }
    }
    found
}

fn crate_src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn the_target_keeps_its_import_rules() {
    let bad = violations(&crate_src());
    assert!(bad.is_empty(), "import rules broken:\n{}", bad.join("\n"));
    // The checker saw the real tree: the stack's files and their imports.
    let uses = crate_uses(&crate_src());
    assert!(uses
        .iter()
        .any(|(f, u)| f == "stack" && u.to == "measure" && u.file == "stack/stats.rs"));
    assert!(uses
        .iter()
        .any(|(f, u)| f == "lab" && u.to == "config" && u.file == "lab.rs"));
}

#[test]
fn nothing_above_the_stack_is_allowed_to_it() {
    let (_, may) = RULES.iter().find(|(m, _)| *m == "stack").unwrap();
    for m in ABOVE_THE_STACK {
        assert!(!may.contains(m), "{m}");
        assert!(crate_src().join(format!("{m}.rs")).exists() || crate_src().join(m).is_dir());
    }
}

#[test]
fn docs_state_the_same_rules() {
    let doc = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/architecture.md");
    let doc = std::fs::read_to_string(&doc).unwrap();
    let section = doc
        .split("## Rust: the target's imports")
        .nth(1)
        .expect("docs/architecture.md has a section \"Rust: the target's imports\"");
    let block = section
        .split("```")
        .nth(1)
        .expect("a fenced block of rules");
    let stated: Vec<(String, Vec<String>)> = block
        .lines()
        .filter_map(|l| l.split_once("may import:"))
        .map(|(m, may)| {
            let may = may.trim().trim_end_matches('.');
            let may = if may == "nothing" {
                Vec::new()
            } else {
                may.split(',').map(|s| s.trim().to_string()).collect()
            };
            (m.trim().to_string(), may)
        })
        .collect();
    let ours: Vec<(String, Vec<String>)> = RULES
        .iter()
        .map(|(m, may)| (m.to_string(), may.iter().map(|s| s.to_string()).collect()))
        .collect();
    assert_eq!(stated, ours, "docs/architecture.md and RULES differ");
}

/// A synthetic crate: `files` as (path under src, text).
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

const LIB: &str = "pub mod config;\npub mod measure;\npub mod op;\npub mod stack;\n\
                   pub use config::ServerConfig;\n";

#[test]
fn a_synthetic_clean_tree_passes() {
    let t = tree(&[
        ("lib.rs", LIB),
        ("config.rs", "use crate::stack::BlockDev;\n"),
        ("measure.rs", "use crate::op::Op;\n"),
        ("op.rs", "pub enum Op {}\n"),
        (
            "stack/mod.rs",
            "pub mod stats;\n#[cfg(test)]\nmod tests;\n\
             //! see crate::config for the spec\n\
             #[cfg(test)]\nmod more {\n    use crate::config::parse;\n}\n",
        ),
        (
            "stack/stats.rs",
            "use crate::{measure::Recorder, op::Op};\n",
        ),
        // Test code may reach anywhere.
        ("stack/tests.rs", "use crate::config::parse;\n"),
    ]);
    assert_eq!(violations(t.path()), Vec::<String>::new());
}

#[test]
fn a_synthetic_stack_importing_upward_fails() {
    let t = tree(&[
        ("lib.rs", LIB),
        ("config.rs", ""),
        ("measure.rs", ""),
        ("op.rs", ""),
        ("stack/mod.rs", "pub mod lab_like;\npub mod deep;\n"),
        ("stack/lab_like.rs", "use crate::config::parse_compact;\n"),
        // Through the root's re-export, and by climbing with super.
        (
            "stack/deep/mod.rs",
            "fn f(_: crate::ServerConfig) {}\nuse super::super::config;\n",
        ),
    ]);
    let bad = violations(t.path());
    assert_eq!(bad.len(), 3, "{bad:#?}");
    assert!(bad[0].starts_with("src/stack/deep/mod.rs:1: `stack` imports `config`"));
    assert!(bad[1].starts_with("src/stack/deep/mod.rs:2: `stack` imports `config`"));
    assert!(bad[2].starts_with("src/stack/lab_like.rs:1: `stack` imports `config`"));
}

#[test]
fn a_synthetic_cycle_between_stats_and_measure_fails() {
    // The cycle issue 22 removed: the stack's stats layer records into
    // measure's Recorder, and measure took Op from the stack.
    let t = tree(&[
        (
            "lib.rs",
            "pub mod measure;\npub mod stack;\npub mod stats;\n",
        ),
        ("measure.rs", "use crate::stack::Op;\n"),
        ("stack/mod.rs", "pub mod stats;\npub enum Op {}\n"),
        ("stack/stats.rs", "use crate::measure::Recorder;\n"),
        ("stats.rs", "use crate::measure::Recorder;\n"),
    ]);
    let bad = violations(t.path());
    assert!(
        bad.iter()
            .any(|b| b.starts_with("src/measure.rs:1: `measure` imports `stack`")),
        "{bad:#?}"
    );
    assert!(
        bad.iter().any(|b| b.starts_with(
            "import cycle measure -> stack -> measure (first edge at src/measure.rs:1)"
        )),
        "{bad:#?}"
    );
    // A cycle among modules no rule names is caught too.
    let t = tree(&[
        ("lib.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
        ("a.rs", "use crate::b::X;\n"),
        ("b.rs", "use super::c::Y;\n"),
        ("c.rs", "pub fn f() { crate::a::g() }\n"),
    ]);
    assert_eq!(
        violations(t.path()),
        vec!["import cycle a -> b -> c -> a (first edge at src/a.rs:1)".to_string()]
    );
}
