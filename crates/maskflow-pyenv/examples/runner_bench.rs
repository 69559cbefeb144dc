//! Issue 29's runner benchmark (run by `bench/runner/run.sh`): the runner's
//! own cost, side by side with the same work done without it.
//!
//! - A polars script aggregating a large CSV (revenue and rows per region),
//!   run (a) directly by the polars environment's interpreter and (b)
//!   through the sandboxed runner with its default limits, alternating,
//!   best of `--rounds`; both must write the same totals.
//! - A trivial script's whole run through the runner (folder, sandbox
//!   set-up, Python start, exit, outputs), beside the same interpreter
//!   started directly, best of 10.
//!
//! Prints a Markdown table and the `TARGET` lines `bench/check` collects.
//! Usage: `runner_bench <csv> [--uv-cache DIR] [--rounds N]`; the CSV is
//! made when missing (`SIZE` bytes, default 1 GB).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use maskflow_pyenv::Environments;
use maskflow_runner::{InputValue, Limits, Python, RunRequest, Runner, find_python};

mod common;
use common::generate;

/// Prints what the script's threads see (stderr), then aggregates.
const POLARS: &str = r#"import json, os, sys
import polars as pl
print("threads", pl.thread_pool_size(), "cpus", len(os.sched_getaffinity(0)), file=sys.stderr)
f = json.load(open(sys.argv[1]))["fields"]
g = (pl.scan_csv(f["data"]).group_by("region")
     .agg(pl.col("amount").sum().alias("sum"), pl.len().alias("count")).sort("region").collect())
with open("outputs/totals.csv", "w") as out:
    out.write("region,revenue,rows\n")
    for k, s, c in g.iter_rows():
        out.write("%s,%.2f,%d\n" % (k, s, c))
"#;

const TRIVIAL: &str = "print('ok')\n";

/// The interpreter a runner starts for `python`.
fn program(python: &Python) -> &Path {
    if python.executable.as_os_str().is_empty() {
        &python.program
    } else {
        &python.executable
    }
}

/// (a): the script run directly, in a folder of its own holding
/// `inputs.json` (the CSV where it is) and `outputs/`; its time, totals and
/// error output.
fn direct(python: &Python, script: &str, csv: &Path, dir: &Path) -> (Duration, String, String) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir.join("outputs")).expect("folder");
    std::fs::write(dir.join("script.py"), script).expect("script");
    let inputs = serde_json::json!({ "fields": { "data": csv.display().to_string() } });
    std::fs::write(dir.join("inputs.json"), inputs.to_string()).expect("inputs");
    let t = Instant::now();
    let out = Command::new(program(python))
        .args(["script.py", "inputs.json"])
        .current_dir(dir)
        .output()
        .expect("python");
    let took = t.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "direct run: {stderr}");
    let totals = std::fs::read_to_string(dir.join("outputs/totals.csv")).unwrap_or_default();
    (took, totals, stderr)
}

/// (b): the same script through the runner, default limits; its time,
/// totals, error output and how its input was given.
fn through_runner(
    runner: &Runner,
    python: &Python,
    script: &str,
    csv: &Path,
    work: &Path,
) -> (Duration, String, String, String) {
    let _ = make_writable_and_remove(work);
    let request = RunRequest {
        script: script.to_owned(),
        inputs: BTreeMap::from([("data".to_owned(), InputValue::File(csv.to_path_buf()))]),
        requirements: Vec::new(),
        workdir: work.to_path_buf(),
        limits: Limits {
            timeout: Duration::from_secs(3600),
            cpu_seconds: 3600,
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
    let totals = std::fs::read_to_string(work.join("outputs/totals.csv")).unwrap_or_default();
    let way = result
        .limit("inputs")
        .and_then(|l| l.mechanism.clone())
        .unwrap_or_default();
    (took, totals, result.stderr, way)
}

/// A finished run folder holds read-only folders (`inputs/`).
fn make_writable_and_remove(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let meta = std::fs::symlink_metadata(e.path())?;
            if meta.is_dir() {
                std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(0o755))?;
                make_writable_and_remove(&e.path())?;
            }
        }
    }
    std::fs::remove_dir_all(dir)
}

/// User and system CPU time of this process's reaped children so far, from
/// `/proc/self/stat` (clock ticks of 10 ms): less disturbed by other work
/// on the machine than wall time. The runner's script is such a child too
/// (its stand-in reaps it and is reaped here).
fn children_cpu_split() -> (Duration, Duration) {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<u64> = stat
        .rsplit_once(") ")
        .map(|(_, r)| r)
        .unwrap_or("")
        .split(' ')
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    // After the command: state is field 3; cutime and cstime are 16 and 17.
    let ticks = |i: usize| Duration::from_millis(fields.get(i).copied().unwrap_or(0) * 10);
    (ticks(13), ticks(14))
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn target(name: &str, figure: &str, target: &str, met: bool) {
    let verdict = if met { "met" } else { "missed" };
    println!("TARGET\t{name}\t{figure}\t{target}\t{verdict}");
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let csv = PathBuf::from(
        args.get(1)
            .expect("usage: runner_bench <csv> [--uv-cache DIR] [--rounds N]"),
    );
    let rounds: usize = arg(&args, "--rounds")
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    let size: u64 = std::env::var("SIZE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000_000);
    if !csv.is_file() {
        eprintln!("generating {} ({size} bytes)…", csv.display());
        generate(&csv, size).expect("generate");
    }
    let csv = csv.canonicalize().expect("csv");
    let bytes = std::fs::metadata(&csv).expect("csv").len();
    let scratch = tempfile::tempdir().expect("scratch");
    let base = find_python(None).expect("python3");
    let runner = Runner::new(None);
    let mut envs = Environments::new(scratch.path().join("home"));
    if let Some(cache) = arg(&args, "--uv-cache") {
        envs = envs.with_cache(cache);
    }
    let reqs = vec!["polars".to_owned()];
    let quiet = |_| {};
    let lock = envs.resolve(&base, &reqs, &quiet).expect("resolve polars");
    let (polars, _) = envs
        .ensure(&base, &lock, &quiet)
        .expect("polars environment");

    // Warm the page cache and both paths once, then alternate.
    let direct_dir = scratch.path().join("direct");
    let work = scratch.path().join("work");
    let (_, expected, seen_direct) = direct(&polars, POLARS, &csv, &direct_dir);
    let (_, totals, seen_runner, way) = through_runner(&runner, &polars, POLARS, &csv, &work);
    assert_eq!(
        expected, totals,
        "the runner's totals equal the direct run's"
    );
    let (mut best_direct, mut best_runner) = (Duration::MAX, Duration::MAX);
    let (mut cpu_direct, mut cpu_runner) = (Duration::MAX, Duration::MAX);
    for round in 0..rounds {
        let before = children_cpu_split();
        let (a, _, _) = direct(&polars, POLARS, &csv, &direct_dir);
        let between = children_cpu_split();
        let (b, _, _, _) = through_runner(&runner, &polars, POLARS, &csv, &work);
        let after = children_cpu_split();
        let (ua, sa) = (between.0 - before.0, between.1 - before.1);
        let (ub, sb) = (after.0 - between.0, after.1 - between.1);
        let (ca, cb) = (ua + sa, ub + sb);
        eprintln!(
            "round {round}: direct {} (CPU user {} system {}) runner {} (CPU user {} system {})",
            ms(a),
            ms(ua),
            ms(sa),
            ms(b),
            ms(ub),
            ms(sb)
        );
        best_direct = best_direct.min(a);
        best_runner = best_runner.min(b);
        cpu_direct = cpu_direct.min(ca);
        cpu_runner = cpu_runner.min(cb);
    }
    let (mut trivial_direct, mut trivial_runner) = (Duration::MAX, Duration::MAX);
    for _ in 0..10 {
        let (a, _, _) = direct(&base, TRIVIAL, &csv, &direct_dir);
        let (b, _, _, _) = through_runner(&runner, &base, TRIVIAL, &csv, &work);
        trivial_direct = trivial_direct.min(a);
        trivial_runner = trivial_runner.min(b);
    }
    let ratio = best_runner.as_secs_f64() / best_direct.as_secs_f64();
    println!(
        "CSV: {} ({:.2} GB), best of {rounds} alternating rounds; the input given as: {way}",
        csv.display(),
        bytes as f64 / 1e9,
    );
    println!(
        "What polars saw: directly `{}`, in the sandbox `{}`\n",
        seen_direct.trim(),
        seen_runner.trim()
    );
    println!("| run | directly | through the runner | ratio |\n|---|---|---|---|");
    println!(
        "| polars aggregation, wall time | {} | {} | {ratio:.2}× |",
        ms(best_direct),
        ms(best_runner)
    );
    println!(
        "| polars aggregation, CPU time (user + system) | {} | {} | {:.2}× |",
        ms(cpu_direct),
        ms(cpu_runner),
        cpu_runner.as_secs_f64() / cpu_direct.as_secs_f64().max(1e-3)
    );
    println!(
        "| trivial script (`print('ok')`; input given too) | {} | {} | +{} |",
        ms(trivial_direct),
        ms(trivial_runner),
        ms(trivial_runner.saturating_sub(trivial_direct))
    );
    let gb = bytes as f64 / 1e9;
    let name = if (0.9..1.1).contains(&gb) {
        "runner overhead (polars, 1 GB)".to_owned()
    } else {
        format!("runner overhead (polars, {:.0} MB)", gb * 1000.0)
    };
    target(&name, &format!("{ratio:.2}×"), "≤ 1.1×", ratio <= 1.1);
    target(
        "trivial run",
        &ms(trivial_runner),
        "< 100 ms",
        trivial_runner < Duration::from_millis(100),
    );
}
