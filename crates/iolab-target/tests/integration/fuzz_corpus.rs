//! Replays the committed cargo-fuzz corpus (`fuzz/corpus/<target>/`)
//! through the same harnesses the fuzz targets run, on stable Rust, so CI
//! checks that no input once found interesting panics, hangs the server
//! or breaks an invariant. The harnesses live in `fuzz/src/` and are
//! included here by path; fuzzing itself needs nightly (docs/target.md,
//! "Fuzzing").

#[path = "../../fuzz/src/lib.rs"]
mod harness;

use std::path::PathBuf;

/// Every file of one target's corpus; a missing or empty corpus fails,
/// so the replay cannot pass by finding nothing.
fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus {}: {e}", dir.display()))
        .map(|e| e.expect("corpus entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "corpus {} is empty", dir.display());
    files
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).expect("read corpus file");
            (p, bytes)
        })
        .collect()
}

fn replay(target: &str, run: fn(&[u8])) {
    for (path, bytes) in corpus(target) {
        eprintln!("{target}: {}", path.display());
        run(&bytes);
    }
}

#[test]
fn session_corpus_keeps_protocol_invariants() {
    replay("session", harness::session);
}

#[test]
fn request_corpus_keeps_protocol_invariants() {
    replay("request", harness::request);
}

/// The session corpus too goes to the live server: both hold client
/// byte streams, and the server corpus alone may miss paths the pure
/// harness found.
#[test]
fn live_server_survives_both_corpora() {
    replay("server", harness::server);
    replay("session", harness::server);
    harness::server_finish();
}
