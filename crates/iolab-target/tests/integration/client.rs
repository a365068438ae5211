//! A minimal NBD client, written from the spec independently of the
//! server's own encoders (so a symmetric misreading cannot pass unseen):
//! fixed newstyle handshake, simple and structured replies, pipelining.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

pub const NBD_EPERM: u32 = 1;
pub const NBD_EIO: u32 = 5;
pub const NBD_EINVAL: u32 = 22;
pub const NBD_ENOSPC: u32 = 28;
pub const NBD_ESHUTDOWN: u32 = 108;

pub const CMD_READ: u16 = 0;
pub const CMD_WRITE: u16 = 1;
pub const CMD_DISC: u16 = 2;
pub const CMD_FLUSH: u16 = 3;
pub const CMD_TRIM: u16 = 4;
pub const CMD_CACHE: u16 = 5;
pub const CMD_WRITE_ZEROES: u16 = 6;
pub const FLAG_FUA: u16 = 1;
pub const FLAG_NO_HOLE: u16 = 2;

pub const OPT_EXPORT_NAME: u32 = 1;
pub const OPT_ABORT: u32 = 2;
pub const OPT_LIST: u32 = 3;
pub const OPT_INFO: u32 = 6;
pub const OPT_GO: u32 = 7;
pub const OPT_STRUCTURED_REPLY: u32 = 8;
pub const REP_ACK: u32 = 1;
pub const REP_SERVER: u32 = 2;
pub const REP_INFO: u32 = 3;

/// One option reply.
#[derive(Debug, Clone)]
pub struct OptReply {
    pub option: u32,
    pub kind: u32,
    pub data: Vec<u8>,
}

/// One transmission reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub cookie: u64,
    /// 0 on success.
    pub error: u32,
    pub data: Vec<u8>,
    pub message: String,
}

/// A connection during the handshake.
pub struct Handshake {
    pub s: UnixStream,
    pub handshake_flags: u16,
}

fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}
fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes(b[..4].try_into().unwrap())
}
fn be64(b: &[u8]) -> u64 {
    u64::from_be_bytes(b[..8].try_into().unwrap())
}

pub fn read_n(s: &mut impl Read, n: usize) -> io::Result<Vec<u8>> {
    let mut b = vec![0u8; n];
    s.read_exact(&mut b)?;
    Ok(b)
}

impl Handshake {
    /// Connect and read the greeting (no client flags sent yet).
    pub fn connect(path: &Path) -> io::Result<Handshake> {
        let mut s = UnixStream::connect(path)?;
        s.set_read_timeout(Some(Duration::from_secs(20)))?;
        let g = read_n(&mut s, 18)?;
        assert_eq!(&g[..8], b"NBDMAGIC");
        assert_eq!(&g[8..16], b"IHAVEOPT");
        Ok(Handshake {
            s,
            handshake_flags: be16(&g[16..]),
        })
    }

    /// Connect and send client flags FIXED_NEWSTYLE | NO_ZEROES.
    pub fn start(path: &Path) -> io::Result<Handshake> {
        let mut h = Handshake::connect(path)?;
        h.s.write_all(&3u32.to_be_bytes())?;
        Ok(h)
    }

    pub fn send_option(&mut self, option: u32, data: &[u8]) -> io::Result<()> {
        let mut m = b"IHAVEOPT".to_vec();
        m.extend_from_slice(&option.to_be_bytes());
        m.extend_from_slice(&(data.len() as u32).to_be_bytes());
        m.extend_from_slice(data);
        self.s.write_all(&m)
    }

    pub fn read_reply(&mut self) -> io::Result<OptReply> {
        let h = read_n(&mut self.s, 20)?;
        assert_eq!(be64(&h), 0x0003_e889_0455_65a9, "option reply magic");
        let data = read_n(&mut self.s, be32(&h[16..]) as usize)?;
        Ok(OptReply {
            option: be32(&h[8..]),
            kind: be32(&h[12..]),
            data,
        })
    }

    /// Send an option and read replies up to the final one.
    pub fn option(&mut self, option: u32, data: &[u8]) -> io::Result<Vec<OptReply>> {
        self.send_option(option, data)?;
        let mut v = Vec::new();
        loop {
            let r = self.read_reply()?;
            let last = r.kind == REP_ACK || r.kind & 0x8000_0000 != 0;
            v.push(r);
            if last {
                return Ok(v);
            }
        }
    }

    pub fn info_data(name: &str, infos: &[u16]) -> Vec<u8> {
        let mut d = (name.len() as u32).to_be_bytes().to_vec();
        d.extend_from_slice(name.as_bytes());
        d.extend_from_slice(&(infos.len() as u16).to_be_bytes());
        infos
            .iter()
            .for_each(|i| d.extend_from_slice(&i.to_be_bytes()));
        d
    }

    /// NBD_OPT_GO; panics with the server's message on an error reply.
    pub fn go(mut self, export: &str, structured: bool) -> io::Result<Client> {
        if structured {
            let r = self.option(OPT_STRUCTURED_REPLY, &[])?;
            assert_eq!(r[0].kind, REP_ACK);
        }
        let replies = self.option(OPT_GO, &Self::info_data(export, &[3]))?;
        let last = replies.last().unwrap();
        assert_eq!(
            last.kind,
            REP_ACK,
            "GO failed: {}",
            String::from_utf8_lossy(&last.data)
        );
        let e = replies
            .iter()
            .find(|r| r.kind == REP_INFO && be16(&r.data) == 0)
            .expect("NBD_INFO_EXPORT");
        let bs = replies
            .iter()
            .find(|r| r.kind == REP_INFO && be16(&r.data) == 3)
            .expect("NBD_INFO_BLOCK_SIZE");
        Ok(Client {
            s: self.s,
            size: be64(&e.data[2..]),
            tflags: be16(&e.data[10..]),
            block_sizes: (
                be32(&bs.data[2..]),
                be32(&bs.data[6..]),
                be32(&bs.data[10..]),
            ),
            pending: HashMap::new(),
            next_cookie: 1,
        })
    }
}

/// A connection in the transmission phase.
pub struct Client {
    pub s: UnixStream,
    pub size: u64,
    pub tflags: u16,
    /// (minimum, preferred, maximum payload)
    pub block_sizes: (u32, u32, u32),
    /// cookie → read length (None for other commands)
    pending: HashMap<u64, Option<u32>>,
    next_cookie: u64,
}

impl Client {
    /// Connect and GO to `export` in one step.
    pub fn open(path: &Path, export: &str) -> Client {
        Handshake::start(path).unwrap().go(export, false).unwrap()
    }

    pub fn open_structured(path: &Path, export: &str) -> Client {
        Handshake::start(path).unwrap().go(export, true).unwrap()
    }

    /// Send one request; returns its cookie.
    pub fn send(&mut self, kind: u16, flags: u16, offset: u64, len: u32, payload: &[u8]) -> u64 {
        let cookie = self.next_cookie;
        self.next_cookie += 1;
        let mut m = Vec::with_capacity(28 + payload.len());
        m.extend_from_slice(&0x2560_9513u32.to_be_bytes());
        m.extend_from_slice(&flags.to_be_bytes());
        m.extend_from_slice(&kind.to_be_bytes());
        m.extend_from_slice(&cookie.to_be_bytes());
        m.extend_from_slice(&offset.to_be_bytes());
        m.extend_from_slice(&len.to_be_bytes());
        m.extend_from_slice(payload);
        self.s.write_all(&m).unwrap();
        self.pending
            .insert(cookie, (kind == CMD_READ).then_some(len));
        cookie
    }

    /// Read the next reply (whole, for structured replies).
    pub fn recv(&mut self) -> io::Result<Reply> {
        let magic = be32(&read_n(&mut self.s, 4)?);
        let r = match magic {
            0x6744_6698 => self.recv_simple()?,
            0x668e_33ef => self.recv_structured()?,
            m => panic!("bad reply magic {m:#x}"),
        };
        self.pending
            .remove(&r.cookie)
            .expect("reply to a pending cookie");
        Ok(r)
    }

    fn recv_simple(&mut self) -> io::Result<Reply> {
        let h = read_n(&mut self.s, 12)?;
        let (error, cookie) = (be32(&h), be64(&h[4..]));
        let len = self.pending.get(&cookie).copied().flatten();
        let data = match len {
            Some(n) if error == 0 => read_n(&mut self.s, n as usize)?,
            _ => Vec::new(),
        };
        Ok(Reply {
            cookie,
            error,
            data,
            message: String::new(),
        })
    }

    fn recv_structured(&mut self) -> io::Result<Reply> {
        let mut r = Reply {
            cookie: 0,
            error: 0,
            data: Vec::new(),
            message: String::new(),
        };
        let mut first = true;
        loop {
            if !first {
                assert_eq!(be32(&read_n(&mut self.s, 4)?), 0x668e_33ef);
            }
            first = false;
            let h = read_n(&mut self.s, 16)?;
            let (flags, ty, cookie, len) = (be16(&h), be16(&h[2..]), be64(&h[4..]), be32(&h[12..]));
            r.cookie = cookie;
            let p = read_n(&mut self.s, len as usize)?;
            match ty {
                0 => assert_eq!(len, 0),
                1 => r.data.extend_from_slice(&p[8..]),
                t if t & 0x8000 != 0 => {
                    r.error = be32(&p);
                    let mlen = be16(&p[4..]) as usize;
                    r.message = String::from_utf8(p[6..6 + mlen].to_vec()).unwrap();
                }
                t => panic!("unexpected chunk type {t}"),
            }
            if flags & 1 != 0 {
                return Ok(r);
            }
        }
    }

    /// Send and wait for the reply (no other request in flight).
    pub fn call(&mut self, kind: u16, flags: u16, offset: u64, len: u32, payload: &[u8]) -> Reply {
        let c = self.send(kind, flags, offset, len, payload);
        let r = self.recv().unwrap();
        assert_eq!(r.cookie, c);
        r
    }

    pub fn read(&mut self, offset: u64, len: u32) -> Result<Vec<u8>, u32> {
        let r = self.call(CMD_READ, 0, offset, len, &[]);
        if r.error == 0 {
            assert_eq!(r.data.len(), len as usize);
            Ok(r.data)
        } else {
            Err(r.error)
        }
    }

    pub fn write(&mut self, offset: u64, data: &[u8], flags: u16) -> Result<(), u32> {
        to_result(
            self.call(CMD_WRITE, flags, offset, data.len() as u32, data)
                .error,
        )
    }

    pub fn flush(&mut self) -> Result<(), u32> {
        to_result(self.call(CMD_FLUSH, 0, 0, 0, &[]).error)
    }

    pub fn trim(&mut self, offset: u64, len: u32) -> Result<(), u32> {
        to_result(self.call(CMD_TRIM, 0, offset, len, &[]).error)
    }

    pub fn zero(&mut self, offset: u64, len: u32, flags: u16) -> Result<(), u32> {
        to_result(self.call(CMD_WRITE_ZEROES, flags, offset, len, &[]).error)
    }

    /// NBD_CMD_DISC, then wait for the server to close.
    pub fn disconnect(mut self) {
        self.send(CMD_DISC, 0, 0, 0, &[]);
        self.pending.clear();
        let mut b = [0u8; 1];
        assert_eq!(
            self.s.read(&mut b).unwrap(),
            0,
            "the server closes after DISC"
        );
    }
}

fn to_result(error: u32) -> Result<(), u32> {
    if error == 0 {
        Ok(())
    } else {
        Err(error)
    }
}
