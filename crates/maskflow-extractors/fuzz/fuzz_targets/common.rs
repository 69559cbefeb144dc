//! Shared by the fuzz targets: write the input to a file named like the
//! format and run the registry on it. Any panic or crash is a finding.

use std::path::PathBuf;

use maskflow_extractors::{ExtractOptions, Registry};

pub fn extract_as(ext: &str, data: &[u8]) {
    let dir = std::env::var_os("MASKFLOW_FUZZ_DIR").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
    let path = dir.join(format!("maskflow-fuzz-{}.{ext}", std::process::id()));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let registry = Registry::with_defaults();
    // Errors are fine; panics, crashes and hangs are not.
    let _ = registry.extract(&path, &ExtractOptions::default(), &mut |_| {});
}
