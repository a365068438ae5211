//! Every error reply: its code, its cause, and that the session goes on.

use std::sync::Arc;

use iolab_target::stack::inject::{InjectLayer, InjectParams};
use iolab_target::stack::memory::MemoryDev;
use iolab_target::stack::{BlockDev, Caps, Layer, Op};

use crate::client::*;
use crate::util::*;

/// A memory device that demands 512-byte alignment: a layer that changes
/// the caps and nothing else.
#[derive(Debug)]
struct Aligned512(Arc<dyn BlockDev>);

impl Layer for Aligned512 {
    fn next(&self) -> &Arc<dyn BlockDev> {
        &self.0
    }
    fn label(&self) -> String {
        "aligned512".into()
    }
    fn caps(&self) -> Caps {
        Caps {
            min_block_bytes: 512,
            ..self.0.caps()
        }
    }
}

fn target() -> Target {
    let inject = InjectParams {
        rate: 0.0,
        offsets: vec![65536],
        ops: vec![Op::Read, Op::Write],
        seed: 0,
    };
    let failing = InjectLayer::new(Arc::new(MemoryDev::new(1 << 20).unwrap()), inject).unwrap();
    Target::start_with(
        vec![
            memory("m", 1 << 20),
            memory("ro", 1 << 20).with_read_only(true),
            export(
                "a512",
                Aligned512(Arc::new(MemoryDev::new(1 << 20).unwrap())),
            ),
            export("bad", failing),
        ],
        |c| c.max_request_bytes = 1 << 20,
    )
}

#[test]
fn out_of_range_requests_are_einval_or_enospc() {
    let t = target();
    for structured in [false, true] {
        let mut c = if structured {
            Client::open_structured(&t.sock, "m")
        } else {
            Client::open(&t.sock, "m")
        };
        assert_eq!(c.read(1 << 20, 1), Err(NBD_EINVAL));
        assert_eq!(c.read(u64::MAX - 10, 512), Err(NBD_EINVAL));
        assert_eq!(c.trim((1 << 20) - 10, 20), Err(NBD_EINVAL));
        assert_eq!(c.write((1 << 20) - 10, &[1u8; 20], 0), Err(NBD_ENOSPC));
        assert_eq!(c.zero((1 << 20) - 10, 20, 0), Err(NBD_ENOSPC));
        // The session goes on.
        c.write(0, &[1u8; 20], 0).unwrap();
    }
}

#[test]
fn structured_errors_carry_a_message() {
    let t = target();
    let mut c = Client::open_structured(&t.sock, "ro");
    let r = c.call(CMD_WRITE, 0, 0, 512, &[0u8; 512]);
    assert_eq!(r.error, NBD_EPERM);
    assert!(r.message.contains("read-only"), "{}", r.message);
    let r = c.call(CMD_READ, 0, 1 << 20, 512, &[]);
    assert_eq!(r.error, NBD_EINVAL);
    assert!(r.message.contains("past the end"), "{}", r.message);
}

#[test]
fn read_only_export_refuses_every_write_with_eperm() {
    let t = target();
    let mut c = Client::open(&t.sock, "ro");
    assert_eq!(c.write(0, &[1u8; 512], 0), Err(NBD_EPERM));
    assert_eq!(c.trim(0, 512), Err(NBD_EPERM));
    assert_eq!(c.zero(0, 512, 0), Err(NBD_EPERM));
    assert_eq!(c.read(0, 512).unwrap(), vec![0u8; 512]);
    c.flush().unwrap();
}

#[test]
fn bad_flags_and_unknown_commands_are_einval() {
    let t = target();
    let mut c = Client::open(&t.sock, "m");
    assert_eq!(
        c.call(CMD_READ, FLAG_NO_HOLE, 0, 512, &[]).error,
        NBD_EINVAL
    );
    assert_eq!(
        c.call(CMD_READ, 4, 0, 512, &[]).error,
        NBD_EINVAL,
        "DF without structured replies"
    );
    assert_eq!(
        c.call(CMD_WRITE, 1 << 7, 0, 4, &[1, 2, 3, 4]).error,
        NBD_EINVAL
    );
    assert_eq!(c.call(CMD_CACHE, 0, 0, 512, &[]).error, NBD_EINVAL);
    assert_eq!(
        c.call(7, 0, 0, 512, &[]).error,
        NBD_EINVAL,
        "block status without meta context"
    );
    assert_eq!(c.call(42, 0, 0, 0, &[]).error, NBD_EINVAL);
    assert_eq!(c.call(CMD_FLUSH, 0, 1, 0, &[]).error, NBD_EINVAL);
    // The refused write's payload was consumed: the stream is still framed.
    assert_eq!(c.read(0, 4).unwrap(), vec![0u8; 4]);
}

#[test]
fn misaligned_requests_are_einval() {
    let t = target();
    let mut c = Client::open(&t.sock, "a512");
    assert_eq!(c.block_sizes.0, 512);
    assert_eq!(c.read(100, 512), Err(NBD_EINVAL));
    assert_eq!(c.write(0, &[1u8; 100], 0), Err(NBD_EINVAL));
    c.write(512, &[1u8; 1024], 0).unwrap();
}

#[test]
fn oversized_payloads_are_einval_and_the_payload_is_skipped() {
    let t = target();
    let mut c = Client::open(&t.sock, "m");
    assert_eq!(c.block_sizes.2, 1 << 20);
    assert_eq!(c.read(0, (1 << 20) + 512), Err(NBD_EINVAL));
    let big = vec![9u8; (1 << 20) + 512];
    assert_eq!(
        c.call(CMD_WRITE, 0, 0, big.len() as u32, &big).error,
        NBD_EINVAL
    );
    assert_eq!(
        c.read(0, 512).unwrap(),
        vec![0u8; 512],
        "nothing was written"
    );
    // Trim and zeroing carry no payload and may be longer than the maximum.
    c.write(0, &[1u8; 512], 0).unwrap();
}

#[test]
fn backend_errors_are_eio() {
    let t = target();
    for structured in [false, true] {
        let mut c = if structured {
            Client::open_structured(&t.sock, "bad")
        } else {
            Client::open(&t.sock, "bad")
        };
        let r = c.call(CMD_READ, 0, 65536 - 512, 1024, &[]);
        assert_eq!(r.error, NBD_EIO);
        if structured {
            assert!(r.message.contains("injected"), "{}", r.message);
        }
        assert_eq!(c.write(65536, &[1u8; 16], 0), Err(NBD_EIO));
        c.write(0, &[1u8; 16], 0).unwrap();
        assert_eq!(c.read(0, 16).unwrap(), vec![1u8; 16]);
    }
}
