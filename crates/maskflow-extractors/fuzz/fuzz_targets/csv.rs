#![no_main]
//! The CSV extractor, and the fast record count against csv_core's.

mod common;

use libfuzzer_sys::fuzz_target;
use maskflow_extractors::csv::count::{Kernel, count_slice, fast_count, slow_count};

fuzz_target!(|data: &[u8]| {
    for delimiter in [b',', b';'] {
        if let Ok(Some(fast)) = fast_count(data, delimiter, &mut |_| {}) {
            let slow = slow_count(data, delimiter, &mut |_| {}).ok();
            assert_eq!(Some(fast), slow, "fast and reference counts differ");
        }
        // Every kernel this CPU has (AVX-512, AVX2, SSE2, portable) is exact or gives up.
        for kernel in Kernel::available() {
            if let Some(n) = count_slice(data, delimiter, kernel) {
                let slow = slow_count(data, delimiter, &mut |_| {}).ok();
                assert_eq!(Some(n), slow, "{kernel:?} and reference counts differ");
            }
        }
    }
    common::extract_as("csv", data);
});
