//! cargo-fuzz target `server`: see [`iolab_target_fuzz::server`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| iolab_target_fuzz::server(data));
