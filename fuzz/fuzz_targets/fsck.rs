//! See `sessiontool_fuzz::fsck`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sessiontool_fuzz::fsck(data));
