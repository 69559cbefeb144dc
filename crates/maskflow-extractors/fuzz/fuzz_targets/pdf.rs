#![no_main]
//! The pdf extractor on arbitrary bytes named .pdf.

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| common::extract_as("pdf", data));
