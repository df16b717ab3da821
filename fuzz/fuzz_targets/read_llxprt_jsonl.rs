//! `llxprt-jsonl`: detect, read, write into every format and back (see `sessiontool_fuzz::read`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sessiontool_fuzz::read("llxprt-jsonl", data));
