#![no_main]
//! The word extractor on arbitrary bytes named .docx.

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| common::extract_as("docx", data));
