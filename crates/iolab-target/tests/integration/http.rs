//! The stats endpoint over a plain TCP client: JSON, Prometheus text, and
//! snapshot-and-reset bracketing exactly a client's window.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

use iolab_target::config::pacing::apply;
use iolab_target::http::StatsHttp;
use iolab_target::pacing::PacingParams;
use iolab_target::StatsSnapshot;

use crate::client::*;
use crate::util::*;

/// Send one request; returns (status code, body).
fn http(addr: SocketAddr, method: &str, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").expect("a header and a body");
    let code = head.split(' ').nth(1).unwrap().parse().unwrap();
    (code, body.to_string())
}

fn start() -> (Target, StatsHttp) {
    let t = Target::start_with(vec![memory("m", 1 << 20)], |c| {
        let p = PacingParams {
            buffers: 16,
            cache: 2,
            unit_bytes: 128 << 10,
            export_limit: None,
            groups: 0,
            retry: Default::default(),
        };
        apply(c, p, false);
    });
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let h = StatsHttp::start(
        addr,
        false,
        t.handle().stats().clone(),
        t.handle().members().clone(),
    )
    .unwrap();
    (t, h)
}

#[test]
fn stats_json_counts_a_bracketed_window_exactly() {
    let (t, h) = start();
    let mut c = Client::open(&t.sock, "m");
    for i in 0..5 {
        c.read(i * 4096, 4096).unwrap();
    }
    // Bracket: reset before; 7 writes and 3 reads; reset after.
    let (code, _) = http(h.local_addr(), "POST", "/reset");
    assert_eq!(code, 200);
    for i in 0..7 {
        c.write(i * 4096, &pattern(i, 4096), 0).unwrap();
    }
    for i in 0..3 {
        c.read(i * 4096, 4096).unwrap();
    }
    let (code, body) = http(h.local_addr(), "POST", "/reset");
    assert_eq!(code, 200);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let snap: StatsSnapshot = serde_json::from_value(v.clone()).unwrap();
    let ops = snap.export("m").unwrap();
    assert_eq!((ops.write.ios, ops.read.ios), (7, 3));
    assert_eq!(ops.write.bytes, 7 * 4096);
    assert_eq!(ops.write.lat_ns.count(), 7);
    assert_eq!(v["summary"]["m"]["read"]["latency"]["count"], 3);
    assert!(
        v["summary"]["m"]["read"]["latency"]["p99_ns"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert!(v["cpu_pct"].as_f64().is_some());
    assert_eq!(snap.pacing.unwrap().grants, 10);
    // The window after the second reset is empty.
    let (_, body) = http(h.local_addr(), "GET", "/stats");
    let snap: StatsSnapshot = serde_json::from_str(&body).unwrap();
    assert_eq!(snap.export("m").unwrap().read.ios, 0);
    c.disconnect();
}

#[test]
fn metrics_are_prometheus_text_with_units() {
    let (t, h) = start();
    let mut c = Client::open(&t.sock, "m");
    c.write(0, &pattern(1, 8192), 0).unwrap();
    let (code, body) = http(h.local_addr(), "GET", "/metrics");
    assert_eq!(code, 200);
    assert!(body.contains("# TYPE iolab_target_requests_total counter"));
    assert!(body.contains("iolab_target_requests_total{export=\"m\",op=\"write\"} 1\n"));
    assert!(body.contains("iolab_target_payload_bytes_total{export=\"m\",op=\"write\"} 8192\n"));
    assert!(body.contains("iolab_target_latency_seconds_count{export=\"m\",op=\"write\"} 1\n"));
    // A histogram in the core's buckets, summaries only when asked.
    assert!(body.contains("# TYPE iolab_target_latency_seconds histogram\n"));
    assert!(body.contains(
        "iolab_target_latency_seconds_bucket{export=\"m\",op=\"write\",le=\"+Inf\"} 1\n"
    ));
    assert!(!body.contains("quantile="));
    assert!(body.contains("iolab_target_pacing_buffers 16\n"));
    assert!(body.contains("iolab_target_cpu_seconds_total{mode=\"user\"} "));
    // The memory backend publishes the storage it allocated: one 64 KiB chunk.
    assert!(body.contains("# TYPE iolab_target_dev_gauge gauge\n"));
    assert!(body.contains(
        "iolab_target_dev_gauge{export=\"m\",path=\"memory\",counter=\"allocated_bytes\"} 65536\n"
    ));
    // Asked for, the quantile summaries come beside the histograms.
    let with = StatsHttp::start_with(
        "127.0.0.1:0".parse().unwrap(),
        false,
        t.handle().stats().clone(),
        t.handle().members().clone(),
        true,
    )
    .unwrap();
    let (_, text) = http(with.local_addr(), "GET", "/metrics");
    assert!(text.contains("# TYPE iolab_target_latency_seconds histogram\n"));
    assert!(text.contains("# TYPE iolab_target_latency_summary_seconds summary\n"));
    assert!(text.contains(
        "iolab_target_latency_summary_seconds{export=\"m\",op=\"write\",quantile=\"0.99\"} "
    ));
    // /metrics does not reset.
    let (_, body) = http(h.local_addr(), "GET", "/stats?reset=1");
    let snap: StatsSnapshot = serde_json::from_str(&body).unwrap();
    assert_eq!(snap.export("m").unwrap().write.ios, 1);
    assert_eq!(snap.counters[0].get("allocated_bytes"), Some(65536));
    let (_, body) = http(h.local_addr(), "GET", "/stats");
    let snap: StatsSnapshot = serde_json::from_str(&body).unwrap();
    assert_eq!(
        snap.export("m").unwrap().write.ios,
        0,
        "?reset=1 started a new window"
    );
    c.disconnect();
}

#[test]
fn unknown_paths_and_methods_are_refused() {
    let (_t, h) = start();
    assert_eq!(http(h.local_addr(), "GET", "/nope").0, 404);
    assert_eq!(http(h.local_addr(), "DELETE", "/stats").0, 405);
    assert_eq!(http(h.local_addr(), "GET", "/reset").0, 405);
    h.stop();
}

#[test]
fn a_remote_address_needs_explicit_permission() {
    let (t, _h) = start();
    let addr: SocketAddr = "0.0.0.0:0".parse().unwrap();
    let e = StatsHttp::start(
        addr,
        false,
        t.handle().stats().clone(),
        t.handle().members().clone(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("loopback"), "{e}");
}
