//! Benchmark helper: how long columns and samples take before the count.
//! `cargo run --release -p maskflow-extractors --example preview_time FILE`

use std::time::Instant;

use maskflow_extractors::{ExtractOptions, Registry};

fn main() {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: preview_time FILE");
        std::process::exit(2);
    };
    let registry = Registry::with_defaults();
    let start = Instant::now();
    match registry.preview(path.as_ref(), &ExtractOptions::default()) {
        Ok(extract) => {
            let ms = start.elapsed().as_secs_f64() * 1000.0;
            println!(
                "{ms:.2} ms for {} columns and {} sample rows",
                extract.columns.len(),
                extract.sample_rows.len()
            );
        }
        Err(err) => {
            eprintln!("error: {err}");
            std::process::exit(1);
        }
    }
}
