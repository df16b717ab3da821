//! See `sessiontool_fuzz::records`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sessiontool_fuzz::records(data));
