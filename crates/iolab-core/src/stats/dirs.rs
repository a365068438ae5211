//! Per-direction arrays as serialised: `[read, write]`, or
//! `[read, write, trim]` when the trim slot is not empty. Results without
//! trims read and write exactly as before trims were counted, and a
//! result of two slots reads with an empty trim slot.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A direction's slot that counted nothing.
pub trait Idle {
    fn idle(&self) -> bool;
}

impl Idle for super::DirStats {
    fn idle(&self) -> bool {
        self.ios == 0 && self.errors == 0
    }
}

impl Idle for super::DirInterval {
    fn idle(&self) -> bool {
        self.ios == 0
    }
}

pub fn serialize<T, S>(dirs: &[T; 3], s: S) -> Result<S::Ok, S::Error>
where
    T: Serialize + Idle,
    S: Serializer,
{
    if dirs[2].idle() {
        dirs[..2].serialize(s)
    } else {
        dirs[..].serialize(s)
    }
}

pub fn deserialize<'de, T, D>(d: D) -> Result<[T; 3], D::Error>
where
    T: Deserialize<'de> + Default,
    D: Deserializer<'de>,
{
    let v: Vec<T> = Vec::deserialize(d)?;
    let n = v.len();
    let mut it = v.into_iter();
    match n {
        2 | 3 => Ok([
            it.next().unwrap_or_default(),
            it.next().unwrap_or_default(),
            it.next().unwrap_or_default(),
        ]),
        _ => Err(D::Error::custom(format!(
            "dirs has {n} entries; expected 2 (read, write) or 3 (read, write, trim)"
        ))),
    }
}
