//! How a job's results are reported (options that change no I/O).

use serde::{Deserialize, Serialize};

/// `unified_rw_reporting`: reads, writes and trims reported apart (fio's
/// `none`), as one direction called "mixed" (`mixed`), or both.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnifiedRw {
    #[default]
    None,
    Mixed,
    Both,
}

impl UnifiedRw {
    /// The default (left out of a serialized job and summary).
    pub fn is_none(&self) -> bool {
        *self == UnifiedRw::None
    }

    /// fio's values: none/mixed/both, or 0/1/2.
    pub fn parse(text: &str) -> Result<UnifiedRw, String> {
        match text.trim() {
            "none" | "0" => Ok(UnifiedRw::None),
            "mixed" | "1" => Ok(UnifiedRw::Mixed),
            "both" | "2" => Ok(UnifiedRw::Both),
            _ => Err("expected none (0), mixed (1) or both (2)".into()),
        }
    }
}
