//! fio's zone options of a prepared job: `zonemode` (strided zones or
//! emulated zoned-block-device zones) with their sizes and limits, and
//! `fill_device`/`fill_fs` (write until the space runs out).
//!
//! Grouped in one struct so the generator ([`crate::gen`]) and the engine
//! read them as a whole; results written before these options existed
//! deserialize to the defaults (no zones, no filling).

use serde::{Deserialize, Serialize};

/// `zonemode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ZoneMode {
    /// No zones (fio's `none`, and the default without `zonesize`).
    #[default]
    None,
    /// I/O in one zone of `zonerange` bytes until `zonesize` bytes are
    /// moved there, then `zoneskip` bytes further on (fio's `strided`,
    /// also what `zonesize` alone means, as in fio).
    Strided,
    /// Sequential-write-required zones of `zonesize` bytes emulated over a
    /// regular file: a write pointer per zone (fio's `zbd`).
    Zbd,
}

impl ZoneMode {
    pub fn parse(text: &str) -> Result<ZoneMode, String> {
        match text {
            "none" => Ok(ZoneMode::None),
            "strided" => Ok(ZoneMode::Strided),
            "zbd" => Ok(ZoneMode::Zbd),
            _ => Err("expected none, strided or zbd".into()),
        }
    }
}

/// Zone and fill options (fio's names in the comments).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ZoneOptions {
    pub mode: ZoneMode,
    /// `zonesize`: strided: bytes moved in a zone before skipping on; zbd:
    /// the size of one zone. 0 = not given.
    pub size_bytes: u64,
    /// `zonerange`: strided: the size of one zone (default `zonesize`).
    pub range_bytes: u64,
    /// `zoneskip`: strided: bytes skipped after a zone is done.
    pub skip_bytes: u64,
    /// `zonecapacity`: zbd: writable bytes from each zone's start
    /// (default the zone size).
    pub capacity_bytes: u64,
    /// `read_beyond_wp`: zbd reads may go past a zone's write pointer.
    pub read_beyond_wp: bool,
    /// `max_open_zones`: zbd: zones written to at once, all workers of the
    /// file together (0 = no limit).
    pub max_open_zones: u32,
    /// `job_max_open_zones`: the same limit per worker (0 = no limit).
    pub job_max_open_zones: u32,
    /// `ignore_zone_limits`: allow more open zones than the device reports.
    pub ignore_zone_limits: bool,
    /// `zone_reset_threshold`: share of the region holding written data
    /// above which zones are reset as `zone_reset_frequency` says.
    pub reset_threshold: f64,
    /// `zone_reset_frequency`: a zone is reset before every 1/f-th write
    /// once the threshold is passed (0 = never).
    pub reset_frequency: f64,
    /// `fill_device` / `fill_fs`: write until the file system (or the
    /// device) has no space left; ENOSPC ends the job without an error.
    pub fill_device: bool,
    /// `create_serialize`: lay out the files one at a time (iolab always
    /// does, before the run).
    pub create_serialize: bool,
}

impl Default for ZoneOptions {
    fn default() -> Self {
        ZoneOptions {
            mode: ZoneMode::None,
            size_bytes: 0,
            range_bytes: 0,
            skip_bytes: 0,
            capacity_bytes: 0,
            read_beyond_wp: false,
            max_open_zones: 0,
            job_max_open_zones: 0,
            ignore_zone_limits: false,
            reset_threshold: 0.0,
            reset_frequency: 0.0,
            fill_device: false,
            create_serialize: true,
        }
    }
}
