//! Benchmark of the profile (issue #28): the whole-file profile of the
//! guard benchmark's ~100 MB CSV (`crates/maskflow-core/benches/guard.rs`,
//! same layout: id, customer, email, amount, sku, date, notes), beside
//! the bare value visit of the same file in the same run (the floor: the
//! same reading and parsing, a sink that does nothing).
//!
//! `cargo run --profile bench -p maskflow-extractors --example profile_time [-- MB]`
//! or `bench/csv/profile.sh [MB]`. Prints a Markdown table.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use maskflow_extractors::profile::Profiler;
use maskflow_extractors::{Registry, ValueOptions, ValueSink};

const NAMES: [&str; 6] = [
    "Zebulon",
    "Ottoline",
    "Marguerite",
    "Bartholomew",
    "Ximena",
    "Leopold",
];

/// Receives every value and does nothing with it.
struct Nothing(u64);

impl ValueSink for Nothing {
    fn table(&mut self, _: Option<&str>, _: &[String]) {}
    fn cell(&mut self, _: usize, value: &str) {
        self.0 += value.len() as u64;
    }
    fn text(&mut self, _: &str) {}
}

fn main() -> std::io::Result<()> {
    let target_mb: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(100);
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("big.csv");
    let rows = write_file(&path, target_mb)?;
    let size = std::fs::metadata(&path)?.len();
    drop(std::fs::read(&path)?);
    let registry = Registry::with_defaults();
    let options = ValueOptions::default();

    let mut bare = Vec::new();
    let mut profiled = Vec::new();
    let mut last = None;
    for _ in 0..3 {
        let t = Instant::now();
        let mut sink = Nothing(0);
        registry
            .values(&path, &options, &mut sink)
            .map_err(std::io::Error::other)?;
        bare.push(t.elapsed());
        let t = Instant::now();
        let mut profiler = Profiler::default();
        registry
            .values(&path, &options, &mut profiler)
            .map_err(std::io::Error::other)?;
        let tables = profiler.finish();
        profiled.push(t.elapsed());
        last = tables.into_iter().next();
    }
    let p = last.map(|t| t.profile).unwrap_or_default();
    println!(
        "{:.0} MB CSV, {rows} rows ({} profiled, {} duplicate, unique keys {:?})\n",
        size as f64 / 1e6,
        p.rows_profiled,
        p.duplicate_rows,
        p.unique_columns
    );
    println!("| pass over the whole file | best of 3 | per 100 MB |");
    println!("|---|---|---|");
    for (name, times) in [
        ("value visit, sink does nothing (floor)", &bare),
        ("**profile** (every column, every row)", &profiled),
    ] {
        let best = times.iter().min().copied().unwrap_or(Duration::ZERO);
        println!(
            "| {name} | {:.2} s | {:.2} s |",
            best.as_secs_f64(),
            best.as_secs_f64() * 100e6 / size as f64
        );
    }
    for c in &p.columns {
        println!(
            "\n{}: {} {:?}, {} distinct{}, shapes {:?}",
            c.name,
            c.inferred_type,
            c.date_format,
            c.distinct,
            if c.distinct_capped { "+" } else { "" },
            c.shapes
                .iter()
                .map(|s| (&s.shape, s.count))
                .collect::<Vec<_>>()
        );
    }
    Ok(())
}

fn write_file(path: &Path, target_mb: usize) -> std::io::Result<u64> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(f, "id,customer,email,amount,sku,date,notes")?;
    let mut i: u64 = 0;
    let mut written = 0usize;
    while written < target_mb * 1024 * 1024 {
        let n = NAMES[(i % 6) as usize];
        let line = format!(
            "{i},{n} Quagmire{},{}.{i}@example-{}.com,\"${},{:03}.{:02}\",PROD-{:06},2024-{:02}-{:02},order {i} shipped to depot {}\n",
            i % 9973,
            n.to_lowercase(),
            i % 311,
            i % 97,
            i % 1000,
            i % 100,
            i * 7 % 1_000_000,
            i % 12 + 1,
            i % 28 + 1,
            i % 503
        );
        written += line.len();
        f.write_all(line.as_bytes())?;
        i += 1;
    }
    Ok(i)
}
