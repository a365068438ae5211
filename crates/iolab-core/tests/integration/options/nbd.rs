//! `ioengine=nbd`: `uri=` forms, refusals, and the options tied to it.

use iolab_core::job::{IoEngine, JobSpec, NbdAddr};
use iolab_core::options::nbd::parse_uri;

fn prepare(args: &[&str]) -> Result<iolab_core::job::PreparedJob, String> {
    JobSpec::new("j")
        .args(args.iter().copied())
        .prepare()
        .map_err(|e| e.to_string())
}

#[test]
fn uri_forms_of_libnbd_parse() {
    let (a, e) = parse_uri("nbd+unix:///disk?socket=/tmp/s.sock").unwrap();
    assert_eq!(
        (a, e.as_str()),
        (
            NbdAddr::Unix {
                socket: "/tmp/s.sock".into()
            },
            "disk"
        )
    );
    let (a, e) = parse_uri("nbd+unix:///?socket=/run/a%20b").unwrap();
    assert_eq!(
        (a, e.as_str()),
        (
            NbdAddr::Unix {
                socket: "/run/a b".into()
            },
            ""
        )
    );
    let (a, e) = parse_uri("nbd://example.org/vol%2F1").unwrap();
    assert_eq!(
        a,
        NbdAddr::Tcp {
            host: "example.org".into(),
            port: 10809
        }
    );
    assert_eq!(e, "vol/1");
    let (a, e) = parse_uri("nbd://[::1]:2000").unwrap();
    assert_eq!(
        (a, e.as_str()),
        (
            NbdAddr::Tcp {
                host: "::1".into(),
                port: 2000
            },
            ""
        )
    );
    let (a, _) = parse_uri("nbd://127.0.0.1:10810/x").unwrap();
    assert_eq!(
        a,
        NbdAddr::Tcp {
            host: "127.0.0.1".into(),
            port: 10810
        }
    );
}

#[test]
fn other_uris_are_refused_with_the_reason() {
    for (uri, why) in [
        ("nbds://h/x", "TLS"),
        ("nbds+unix:///x?socket=/s", "TLS"),
        ("nbd+unix:///x", "socket=PATH"),
        ("nbd+unix://host/x?socket=/s", "no host"),
        ("nbd+unix:///x?socket=/s&tls=on", "only socket=PATH"),
        ("nbd://h:99999/x", "port"),
        ("nbd:///x", "needs a host"),
        ("http://h/x", "unknown scheme"),
        ("/dev/nbd0", "expected nbd://"),
    ] {
        let e = parse_uri(uri).unwrap_err();
        assert!(e.contains(why), "{uri}: {e}");
    }
}

#[test]
fn nbd_jobs_need_a_uri_and_no_files() {
    let j = prepare(&[
        "ioengine=nbd",
        "uri=nbd://h/e",
        "iodepth=8",
        "nbd_connections=2",
    ])
    .unwrap();
    assert_eq!(j.ioengine, IoEngine::Nbd);
    let t = j.nbd.as_ref().unwrap();
    assert_eq!((t.export.as_str(), t.connections), ("e", 2));
    assert_eq!(j.size, None, "size defaults to the export's");
    assert_eq!(
        j.files_for_worker(1),
        vec![std::path::PathBuf::from("nbd://h/e")]
    );
    let e = prepare(&["ioengine=nbd"]).unwrap_err();
    assert!(e.contains("uri") && e.contains("required"), "{e}");
    let e = prepare(&["ioengine=nbd", "uri=nbd://h/e", "filename=/tmp/x"]).unwrap_err();
    assert!(e.contains("drop filename="), "{e}");
    let e = prepare(&["ioengine=nbd", "uri=nbds://h/e"]).unwrap_err();
    assert!(e.contains("uri") && e.contains("TLS"), "{e}");
    let e = prepare(&["ioengine=io_uring", "size=1m", "uri=nbd://h/e"]).unwrap_err();
    assert!(e.contains("only used by ioengine=nbd"), "{e}");
    let j = prepare(&["ioengine=io_uring", "size=1m", "nbd_connections=2"]).unwrap();
    assert!(
        j.warnings
            .iter()
            .any(|w| w.contains("nbd_connections has no effect")),
        "{:?}",
        j.warnings
    );
}

#[test]
fn more_connections_than_iodepth_are_capped_with_a_warning() {
    let j = prepare(&[
        "ioengine=nbd",
        "uri=nbd://h/e",
        "iodepth=2",
        "nbd_connections=4",
    ])
    .unwrap();
    assert_eq!(j.nbd.as_ref().unwrap().connections, 2);
    assert!(
        j.warnings.iter().any(|w| w.contains("nbd_connections=4")),
        "{:?}",
        j.warnings
    );
}

#[test]
fn results_written_before_nbd_still_parse() {
    let j = prepare(&["size=1m"]).unwrap();
    let mut v = serde_json::to_value(&j).unwrap();
    v.as_object_mut().unwrap().remove("nbd");
    let back: iolab_core::job::PreparedJob = serde_json::from_value(v).unwrap();
    assert_eq!(back, j);
}
