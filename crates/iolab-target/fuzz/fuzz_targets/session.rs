//! cargo-fuzz target `session`: see [`iolab_target_fuzz::session`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| iolab_target_fuzz::session(data));
