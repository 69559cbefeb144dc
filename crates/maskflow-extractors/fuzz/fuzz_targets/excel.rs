#![no_main]
//! The excel extractor on arbitrary bytes named .xlsx.

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| common::extract_as("xlsx", data));
