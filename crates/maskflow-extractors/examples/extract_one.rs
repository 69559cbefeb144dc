//! Extracts each file named on the command line and prints its masked
//! extract as JSON (a stand-in for `maskflow extract`, used by `bench/excel`).

use std::path::Path;
use std::process::ExitCode;

use maskflow_extractors::{ExtractOptions, extract_path};

fn main() -> ExitCode {
    let mut failed = false;
    for arg in std::env::args_os().skip(1) {
        let path = Path::new(&arg);
        match extract_path(path, &ExtractOptions::default(), &mut |_| {}) {
            Ok(extract) => match serde_json::to_string_pretty(&extract) {
                Ok(json) => println!("{json}"),
                Err(e) => {
                    eprintln!("error: {}: {e}", path.display());
                    failed = true;
                }
            },
            Err(e) => {
                eprintln!("error: {e}");
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
