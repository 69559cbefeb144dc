//! Issue 16's benchmark (run by `bench/pyenv/run.sh`): the same aggregation
//! of a large CSV (revenue and count per region) by a standard-library
//! script and by pandas and polars scripts, each run through the sandboxed
//! runner in its managed environment; and the time to create an
//! environment the first time (empty uv cache: downloads from PyPI), from
//! uv's cache, and to reuse it. Prints a Markdown table.
//!
//! Usage: `pyenv_bench <csv> [--uv-cache DIR]`; the CSV is made when missing
//! (`SIZE` bytes, default 1 GB).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use maskflow_pyenv::{Environments, Lock};
use maskflow_runner::{InputValue, Limits, Python, RunRequest, Runner, find_python};

mod common;
use common::generate;

const STDLIB: &str = r#"import csv, json, sys
f = json.load(open(sys.argv[1]))["fields"]
totals, counts = {}, {}
with open(f["data"], newline="") as fh:
    r = csv.reader(fh)
    next(r)
    for row in r:
        k = row[0]
        totals[k] = totals.get(k, 0.0) + float(row[2])
        counts[k] = counts.get(k, 0) + 1
with open("outputs/totals.csv", "w") as out:
    out.write("region,revenue,rows\n")
    for k in sorted(totals):
        out.write("%s,%.2f,%d\n" % (k, totals[k], counts[k]))
"#;

const PANDAS: &str = r#"import json, sys
import pandas as pd
f = json.load(open(sys.argv[1]))["fields"]
df = pd.read_csv(f["data"], usecols=["region", "amount"], dtype={"region": "category", "amount": "float64"}, engine="c")
g = df.groupby("region", observed=True)["amount"].agg(["sum", "count"]).sort_index()
with open("outputs/totals.csv", "w") as out:
    out.write("region,revenue,rows\n")
    for k, row in g.iterrows():
        out.write("%s,%.2f,%d\n" % (k, row["sum"], row["count"]))
"#;

const POLARS: &str = r#"import json, sys
import polars as pl
f = json.load(open(sys.argv[1]))["fields"]
g = (pl.scan_csv(f["data"]).group_by("region")
     .agg(pl.col("amount").sum().alias("sum"), pl.len().alias("count")).sort("region").collect())
with open("outputs/totals.csv", "w") as out:
    out.write("region,revenue,rows\n")
    for k, s, c in g.iter_rows():
        out.write("%s,%.2f,%d\n" % (k, s, c))
"#;

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn env_for(
    envs: &Environments,
    base: &Python,
    reqs: &[&str],
) -> (Python, Lock, Duration, Duration) {
    let quiet = |_| {};
    let reqs: Vec<String> = reqs.iter().map(|r| (*r).to_owned()).collect();
    let t = Instant::now();
    let lock = envs.resolve(base, &reqs, &quiet).expect("resolve");
    let resolve = t.elapsed();
    let t = Instant::now();
    let (python, _) = envs.ensure(base, &lock, &quiet).expect("ensure");
    (python, lock, resolve, t.elapsed())
}

fn run(
    runner: &Runner,
    python: &Python,
    script: &str,
    csv: &Path,
    work: &Path,
) -> (Duration, String) {
    let mut inputs = BTreeMap::new();
    inputs.insert("data".to_owned(), InputValue::File(csv.to_path_buf()));
    let request = RunRequest {
        script: script.to_owned(),
        inputs,
        requirements: Vec::new(),
        workdir: work.to_path_buf(),
        limits: Limits {
            timeout: Duration::from_secs(3600),
            cpu_seconds: 3600,
            memory_bytes: 8 << 30,
            output_bytes: 4 << 30,
            ..Limits::default()
        },
        shared_folders: Vec::new(),
    };
    let t = Instant::now();
    let result = runner
        .run_with(python, &request, &AtomicBool::new(false))
        .expect("run");
    let took = t.elapsed();
    assert!(result.succeeded(), "{}: {}", result.message, result.stderr);
    let totals = std::fs::read_to_string(work.join("outputs/totals.csv")).expect("totals");
    (took, totals)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let csv = PathBuf::from(
        args.get(1)
            .expect("usage: pyenv_bench <csv> [--uv-cache DIR]"),
    );
    let warm_cache = args
        .iter()
        .position(|a| a == "--uv-cache")
        .and_then(|i| args.get(i + 1))
        .map(PathBuf::from);
    let size: u64 = std::env::var("SIZE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000_000);
    if !csv.is_file() {
        eprintln!("generating {} ({size} bytes)…", csv.display());
        generate(&csv, size).expect("generate");
    }
    let bytes = std::fs::metadata(&csv).expect("csv").len();
    let scratch = tempfile::tempdir().expect("scratch");
    let base = find_python(None).expect("python3");
    let runner = Runner::new(None);

    // Environment creation: cold (empty uv cache), from uv's cache, reuse.
    let cold = Environments::new(scratch.path().join("home-cold"))
        .with_cache(scratch.path().join("empty-cache"));
    let (_, _, cold_resolve, cold_ensure) = env_for(&cold, &base, &["pandas"]);
    let cache = warm_cache.unwrap_or_else(|| scratch.path().join("empty-cache"));
    let envs = Environments::new(scratch.path().join("home")).with_cache(&cache);
    let (pandas_py, pandas_lock, warm_resolve, warm_ensure) = env_for(&envs, &base, &["pandas"]);
    let t = Instant::now();
    let _ = envs.ensure(&base, &pandas_lock, &|_| {}).expect("reuse");
    let reuse = t.elapsed();
    let (polars_py, _, _, _) = env_for(&envs, &base, &["polars"]);

    // The aggregation, through the sandboxed runner.
    let mut rows = Vec::new();
    let mut expected: Option<String> = None;
    for (name, python, script) in [
        ("Python standard library (`csv`)", &base, STDLIB),
        ("pandas (C parser, 2 columns)", &pandas_py, PANDAS),
        ("polars (lazy scan)", &polars_py, POLARS),
    ] {
        let work = scratch.path().join(format!("run-{}", rows.len()));
        let (took, totals) = run(&runner, python, script, &csv, &work);
        match &expected {
            None => expected = Some(totals),
            Some(e) => assert_eq!(e, &totals, "{name} agrees with the standard library"),
        }
        rows.push((name, took));
    }
    println!(
        "CSV: {} ({:.2} GB), Python {}.{}\n",
        csv.display(),
        bytes as f64 / 1e9,
        base.version.0,
        base.version.1
    );
    println!("| script (through the sandboxed runner) | time | vs stdlib |\n|---|---|---|");
    let stdlib = rows[0].1.as_secs_f64();
    for (i, (name, took)) in rows.iter().enumerate() {
        let vs = if i == 0 {
            "—".to_owned()
        } else {
            format!("{:.1}× faster", stdlib / took.as_secs_f64())
        };
        println!("| {name} | {} | {vs} |", secs(*took));
    }
    println!(
        "\n| pandas environment | resolve (`uv pip compile`) | create + install |\n|---|---|---|"
    );
    println!(
        "| first time, empty uv cache (PyPI) | {} | {} |",
        secs(cold_resolve),
        secs(cold_ensure)
    );
    println!(
        "| from uv's cache | {} | {} |",
        secs(warm_resolve),
        secs(warm_ensure)
    );
    println!(
        "| reuse (already made) | — | {:.1} ms |",
        reuse.as_secs_f64() * 1000.0
    );
}
