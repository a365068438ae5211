//! Real NBD clients from Debian packages against iolab's target:
//! nbdinfo and nbdcopy (libnbd-bin), qemu-io and qemu-img (qemu-utils).
//!
//! Like tests/peers.py: a missing peer skips the test (with a message),
//! except under CI=true, where it fails — CI must run them.

use std::path::Path;
use std::process::Command;

use crate::client::*;
use crate::util::*;

/// Whether `tool` is installed; panics under CI=true when it is not.
fn require_peer(tool: &str, package: &str) -> bool {
    let found = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        if std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true")) {
            panic!("{tool} is required under CI=true: apt-get install {package}");
        }
        eprintln!("skipped: {tool} not installed (apt-get install {package})");
    }
    found
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{cmd:?} failed: {se}{so}");
    so.into_owned()
}

fn uri(sock: &Path, export: &str) -> String {
    format!("nbd+unix:///{export}?socket={}", sock.display())
}

#[test]
fn nbdinfo_shows_the_advertised_flags_and_block_sizes() {
    if !require_peer("nbdinfo", "libnbd-bin") {
        return;
    }
    let t = Target::start(vec![
        memory("disk0", 64 << 20),
        memory("ro", 1 << 20).with_read_only(true),
    ]);
    let j: serde_json::Value = serde_json::from_str(&run(
        Command::new("nbdinfo").args(["--json", &uri(&t.sock, "disk0")])
    ))
    .unwrap();
    let e = &j["exports"][0];
    assert_eq!(e["export-size"], 64 << 20);
    for (k, v) in [
        ("is_read_only", false),
        ("can_flush", true),
        ("can_fua", true),
        ("can_trim", true),
        ("can_zero", true),
        ("can_multi_conn", true),
        ("can_cache", false),
    ] {
        assert_eq!(e[k], v, "{k} in {e}");
    }
    assert_eq!(e["block_size_minimum"], 1);
    assert_eq!(e["block_size_preferred"], 4096);
    assert_eq!(e["block_size_maximum"], 64 << 20);
    let ro: serde_json::Value = serde_json::from_str(&run(
        Command::new("nbdinfo").args(["--json", &uri(&t.sock, "ro")])
    ))
    .unwrap();
    assert_eq!(ro["exports"][0]["is_read_only"], true);
    let list = run(Command::new("nbdinfo").args(["--list", "--json", &uri(&t.sock, "")]));
    let names: serde_json::Value = serde_json::from_str(&list).unwrap();
    let names: Vec<&str> = names["exports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["export-name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["disk0", "ro"]);
}

#[test]
fn qemu_io_writes_a_pattern_that_reads_back_everywhere() {
    if !require_peer("qemu-io", "qemu-utils") {
        return;
    }
    let t = Target::start(vec![memory("disk0", 16 << 20)]);
    let u = uri(&t.sock, "disk0");
    run(Command::new("qemu-io").args([
        "-f",
        "raw",
        "-c",
        "write -P 0xa5 1M 2M",
        "-c",
        "write -z 4M 1M",
        &u,
    ]));
    // qemu-io verifies the pattern itself ("read -P" fails on a mismatch).
    run(Command::new("qemu-io").args([
        "-f",
        "raw",
        "-c",
        "read -P 0xa5 1M 2M",
        "-c",
        "read -P 0 4M 1M",
        &u,
    ]));
    let mut c = Client::open(&t.sock, "disk0");
    assert!(c.read(1 << 20, 2 << 20).unwrap().iter().all(|&b| b == 0xa5));
    assert!(c.read(0, 1 << 20).unwrap().iter().all(|&b| b == 0));
}

#[test]
fn qemu_img_and_nbdcopy_round_trip_random_data() {
    let have_qemu = require_peer("qemu-img", "qemu-utils");
    let have_nbdcopy = require_peer("nbdcopy", "libnbd-bin");
    if !have_qemu && !have_nbdcopy {
        return;
    }
    let t = Target::start(vec![memory("a", 8 << 20), memory("b", 8 << 20)]);
    let src = t.dir.path().join("src.img");
    std::fs::write(&src, pattern(99, 8 << 20)).unwrap();
    if have_qemu {
        let dst = uri(&t.sock, "a");
        run(Command::new("qemu-img")
            .args(["convert", "-n", "-f", "raw", "-O", "raw"])
            .arg(&src)
            .arg(&dst));
        run(Command::new("qemu-img")
            .args(["compare", "-f", "raw", "-F", "raw"])
            .arg(&src)
            .arg(&dst));
    }
    if have_nbdcopy {
        let back = t.dir.path().join("back.img");
        run(Command::new("nbdcopy").arg(&src).arg(uri(&t.sock, "b")));
        run(Command::new("nbdcopy").arg(uri(&t.sock, "b")).arg(&back));
        assert!(
            std::fs::read(&back).unwrap() == std::fs::read(&src).unwrap(),
            "nbdcopy round trip differs"
        );
    }
}
