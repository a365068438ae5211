//! cargo-fuzz target `request`: see [`iolab_target_fuzz::request`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| iolab_target_fuzz::request(data));
