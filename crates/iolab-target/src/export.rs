//! Exports: a name, a description, read-only or not, and the block stack
//! behind them; and the set a server offers.
//!
//! An [`Export`] checks its stack's block sizes against the spec when it
//! is made (a power of two, minimum ≤ 64 KiB, preferred ≥ 512 and ≥ the
//! minimum) and works out the transmission flags it advertises. Each
//! export has its own [`Recorder`] where the server measures every request
//! from received to reply sent. [`ExportSet`] holds the exports in order;
//! the empty name (the spec's "default export") selects the first.

use std::sync::Arc;

use crate::error::TargetError;
use crate::measure::Recorder;
use crate::proto::{tflags, MAX_STRING_BYTES};
use crate::stack::{BlockDev, Caps};

/// One export.
#[derive(Debug)]
pub struct Export {
    name: String,
    description: String,
    read_only: bool,
    dev: Arc<dyn BlockDev>,
    caps: Caps,
    rec: Arc<Recorder>,
}

fn check_string(what: &str, s: &str) -> Result<(), String> {
    if s.len() > MAX_STRING_BYTES {
        return Err(format!("{what} is longer than the protocol's 4096 bytes"));
    }
    if s.contains('\0') {
        return Err(format!("{what} contains a NUL character"));
    }
    Ok(())
}

fn check_caps(c: &Caps) -> Result<(), String> {
    let (min, pref) = (c.min_block_bytes, c.preferred_block_bytes);
    if !min.is_power_of_two() || min > 65536 {
        return Err(format!(
            "minimum block size {min} is not a power of two ≤ 65536"
        ));
    }
    if !pref.is_power_of_two() || pref < min.max(512) {
        return Err(format!(
            "preferred block size {pref} is not a power of two ≥ max(512, {min})"
        ));
    }
    Ok(())
}

impl Export {
    /// An export of `dev` named `name` (writable, no description).
    pub fn new(name: impl Into<String>, dev: Arc<dyn BlockDev>) -> Result<Export, TargetError> {
        let name = name.into();
        let bad = |msg: String| TargetError::Export {
            name: name.clone(),
            msg,
        };
        if name.is_empty() {
            return Err(bad(
                "the name is empty (the empty name selects the first export)".into(),
            ));
        }
        check_string("the name", &name).map_err(bad)?;
        let caps = dev.caps();
        check_caps(&caps).map_err(bad)?;
        let rec = Arc::new(Recorder::new());
        Ok(Export {
            name,
            description: String::new(),
            read_only: false,
            dev,
            caps,
            rec,
        })
    }

    /// Set the description shown by NBD_OPT_LIST and NBD_INFO_DESCRIPTION.
    pub fn with_description(mut self, d: impl Into<String>) -> Result<Export, TargetError> {
        let d = d.into();
        check_string("the description", &d).map_err(|msg| TargetError::Export {
            name: self.name.clone(),
            msg,
        })?;
        self.description = d;
        Ok(self)
    }

    /// Serve read-only (writes fail with `NBD_EPERM`).
    pub fn with_read_only(mut self, read_only: bool) -> Export {
        self.read_only = read_only;
        self
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn description(&self) -> &str {
        &self.description
    }

    /// Read-only by configuration or because the stack cannot write.
    pub fn is_read_only(&self) -> bool {
        self.read_only || !self.caps.can_write
    }

    pub fn caps(&self) -> &Caps {
        &self.caps
    }

    pub fn dev(&self) -> &Arc<dyn BlockDev> {
        &self.dev
    }

    pub(crate) fn recorder(&self) -> &Arc<Recorder> {
        &self.rec
    }

    /// Transmission flags before negotiation (SEND_DF is added per
    /// connection when structured replies are on).
    pub fn tflags(&self) -> u16 {
        let c = &self.caps;
        let mut f = tflags::HAS_FLAGS;
        let mut set = |cond: bool, bit: u16| {
            if cond {
                f |= bit;
            }
        };
        set(c.can_flush, tflags::SEND_FLUSH);
        set(c.can_multi_conn, tflags::CAN_MULTI_CONN);
        if self.is_read_only() {
            // Trim, zeroing and FUA only concern writes, which all fail here.
            set(true, tflags::READ_ONLY);
        } else {
            set(c.can_fua, tflags::SEND_FUA);
            set(c.can_trim, tflags::SEND_TRIM);
            set(c.can_zero, tflags::SEND_WRITE_ZEROES);
        }
        f
    }
}

/// The exports a server offers, in order.
#[derive(Debug, Clone)]
pub struct ExportSet {
    list: Vec<Arc<Export>>,
}

impl ExportSet {
    /// Names must be unique; at least one export.
    pub fn new(exports: Vec<Export>) -> Result<ExportSet, TargetError> {
        if exports.is_empty() {
            return Err(TargetError::config(
                "export",
                "no exports: define at least one",
            ));
        }
        for (i, e) in exports.iter().enumerate() {
            if exports[..i].iter().any(|o| o.name == e.name) {
                return Err(TargetError::Export {
                    name: e.name.clone(),
                    msg: "defined twice".into(),
                });
            }
        }
        Ok(ExportSet {
            list: exports.into_iter().map(Arc::new).collect(),
        })
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn get(&self, i: usize) -> Option<&Arc<Export>> {
        self.list.get(i)
    }

    /// The export named `name`; the empty name is the first export.
    pub fn find(&self, name: &str) -> Option<(usize, &Arc<Export>)> {
        if name.is_empty() {
            return self.list.first().map(|e| (0, e));
        }
        self.list.iter().enumerate().find(|(_, e)| e.name == name)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<Export>> {
        self.list.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stack::memory::MemoryDev;
    use crate::stack::null::NullDev;

    #[test]
    fn flags_follow_caps_and_read_only() {
        let e = Export::new("m", Arc::new(MemoryDev::new(4096).unwrap())).unwrap();
        let all = tflags::HAS_FLAGS
            | tflags::SEND_FLUSH
            | tflags::SEND_FUA
            | tflags::SEND_TRIM
            | tflags::SEND_WRITE_ZEROES
            | tflags::CAN_MULTI_CONN;
        assert_eq!(e.tflags(), all);
        let ro = e.with_read_only(true);
        assert_eq!(
            ro.tflags(),
            tflags::HAS_FLAGS | tflags::SEND_FLUSH | tflags::CAN_MULTI_CONN | tflags::READ_ONLY
        );
    }

    #[test]
    fn names_are_checked_and_unique() {
        let dev = || Arc::new(NullDev::new(4096)) as Arc<dyn BlockDev>;
        assert!(Export::new("", dev()).is_err());
        assert!(Export::new("a\0b", dev()).is_err());
        assert!(Export::new("x".repeat(4097), dev()).is_err());
        let set = ExportSet::new(vec![
            Export::new("a", dev()).unwrap(),
            Export::new("b", dev()).unwrap(),
        ])
        .unwrap();
        assert_eq!(set.find("").unwrap().0, 0);
        assert_eq!(set.find("b").unwrap().0, 1);
        assert!(set.find("c").is_none());
        let dup = ExportSet::new(vec![
            Export::new("a", dev()).unwrap(),
            Export::new("a", dev()).unwrap(),
        ]);
        assert!(dup.unwrap_err().to_string().contains("defined twice"));
        assert!(ExportSet::new(vec![]).is_err());
    }
}
