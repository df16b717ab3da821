//! See `sessiontool_fuzz::repair`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sessiontool_fuzz::repair(data));
