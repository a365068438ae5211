//! Tests of `iolab_engine::layout`: safety checks and file preparation.
//!
//! Index:
//! - `common`: a job prepared from fio options, `prepare`, file readers.
//! - `system`: commands, and guards that undo mounts, loop devices, swap,
//!   read-only and immutable flags even when a test panics; the lock that
//!   keeps device tests from racing the others' forks.
//! - `files`: regular files — create/fill/mark, reuse, extend, refusals
//!   (byte-for-byte unchanged), bad paths, permissions, free space.
//! - `direct`: O_DIRECT support and alignment checks, open flags.
//! - `regions`: which region each worker gets.
//! - `devices`: signature probe on images, mount-table parsing, and real
//!   loop devices (skipped, with a message, where losetup cannot run;
//!   failed instead under `CI=true`).
//!
//! Several tests mount small tmpfs/ramfs filesystems or attach loop
//! devices; they need root and say so when they skip.

mod common;
mod devices;
mod direct;
mod files;
mod regions;
pub mod system;
