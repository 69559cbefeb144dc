//! Benchmark of the privacy guard (issue #13's targets: building the index
//! of a 100 MB file in ≤ 1 s, checking a 100 KB request in < 0.5 ms).
//!
//! It writes a generated ~100 MB CSV, then, in the same run and on the same
//! file, times Maskflow's guard and a naive baseline: a `HashSet<String>`
//! of every lower-cased token of 4 or more characters of every cell (what a
//! guard without phrases, numbers or dates would do), checked by splitting
//! the request into lower-cased tokens. Both check the same ~100 KB
//! request of masked JSON and prose (no match), and a short request with
//! three values of the file in other formats (which the guard must block).
//!
//! Run: `cargo bench -p maskflow-core --bench guard [-- MB]` or
//! `bench/privacy/run.sh [MB]`. Prints a Markdown table, then bench/check's
//! two TARGET lines.

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use maskflow_llm::{ChatMessage, ChatRole, LlmRequest, Role};
use maskflow_privacy::GuardIndex;

const NAMES: [&str; 6] = [
    "Zebulon",
    "Ottoline",
    "Marguerite",
    "Bartholomew",
    "Ximena",
    "Leopold",
];

fn main() -> std::io::Result<()> {
    let target_mb: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(100);
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("big.csv");
    let rows = write_file(&path, target_mb)?;
    let size = std::fs::metadata(&path)?.len();
    // Read once so both sides start from the page cache.
    drop(std::fs::read(&path)?);

    let body = request_body();
    let big = request(body.clone());
    // Row 1234's name, amount and date, each written another way.
    let i = 1234u64;
    let planted = request(format!(
        "customer {} QUAGMIRE{} paid {}{:03}.{:02} on {:02}/{:02}/2024",
        NAMES[(i % 6) as usize].to_uppercase(),
        i % 9973,
        i % 97,
        i % 1000,
        i % 100,
        i % 28 + 1,
        i % 12 + 1,
    ));

    let (t, c) = (Instant::now(), cpu_time());
    let mut index = GuardIndex::new();
    index.add_file(&path, "big.csv", u64::MAX);
    let guard_build = (t.elapsed(), cpu_time() - c);
    let guard_check = time_check(|| index.check_request(&big, &[]).len());
    let guard_big = index.check_request(&big, &[]).len();
    let guard_planted = index.check_request(&planted, &[]).len();

    let (t, c) = (Instant::now(), cpu_time());
    let naive = Naive::build(&path)?;
    let naive_build = (t.elapsed(), cpu_time() - c);
    let naive_check = time_check(|| naive.check(&body));
    let naive_big = naive.check(&body);
    let naive_planted = naive.check(&planted.messages[0].content);

    println!(
        "{:.0} MB CSV, {rows} rows, 100 KB request = {} KB\n",
        size as f64 / 1e6,
        body.len() / 1024
    );
    println!(
        "| guard | keys | index built in | 100 KB request checked in | matches (clean request) | matches (3 planted values) |"
    );
    println!("|---|---|---|---|---|---|");
    println!(
        "| **Maskflow** (phrases, identifying tokens, numbers, dates) | {} ({} MB) | **{:.2} s** ({:.2} s CPU) | **{:.3} ms** ({:.3} ms CPU) | {guard_big} | {guard_planted} |",
        index.len(),
        index.bytes() / 1_000_000,
        guard_build.0.as_secs_f64(),
        guard_build.1.as_secs_f64(),
        guard_check.0.as_secs_f64() * 1e3,
        guard_check.1.as_secs_f64() * 1e3,
    );
    println!(
        "| naive `HashSet<String>` of tokens ≥ 4 chars | {} | {:.2} s ({:.2} s CPU) | {:.3} ms ({:.3} ms CPU) | {naive_big} | {naive_planted} |",
        naive.tokens.len(),
        naive_build.0.as_secs_f64(),
        naive_build.1.as_secs_f64(),
        naive_check.0.as_secs_f64() * 1e3,
        naive_check.1.as_secs_f64() * 1e3,
    );
    // A guard that blocks the clean request or lets the planted values
    // through is broken, and its times mean nothing.
    if guard_big != 0 || guard_planted == 0 {
        return Err(std::io::Error::other(format!(
            "the guard found {guard_big} matches in the clean request and {guard_planted} in the planted one"
        )));
    }
    print_targets(
        size,
        guard_build,
        guard_check.0,
        naive_build.0,
        naive_check.0,
    );
    Ok(())
}

/// bench/check's TARGET lines (issue 13's targets, wall-clock time; the
/// naive peer of the same run beside each figure).
fn print_targets(
    size: u64,
    build: (Duration, Duration),
    check: Duration,
    naive_build: Duration,
    naive_check: Duration,
) {
    let verdict = |met: bool| if met { "met" } else { "missed" };
    let check_ms = check.as_secs_f64() * 1e3;
    println!(
        "TARGET\tguard check of a 100 KB request\t{check_ms:.3} ms (naive {:.3} ms)\t< 0.5 ms\t{}",
        naive_check.as_secs_f64() * 1e3,
        verdict(check_ms < 0.5),
    );
    let per_100mb = |d: Duration| d.as_secs_f64() * 1e8 / size as f64;
    let build_s = per_100mb(build.0);
    println!(
        "TARGET\tguard index build per 100 MB\t{build_s:.2} s ({:.2} s CPU; naive {:.2} s; {:.0} MB file)\t≤ 1 s\t{}",
        per_100mb(build.1),
        per_100mb(naive_build),
        size as f64 / 1e6,
        verdict(build_s <= 1.0),
    );
}

/// Writes the generated CSV: ids, names, e-mails, amounts, SKUs, dates, notes.
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

/// ~100 KB of prompt text: masked-looking JSON plus prose.
fn request_body() -> String {
    let mut body = String::new();
    while body.len() < 100 * 1024 {
        body.push_str("{\"customer\": \"Aaaaaaa Aaaaaaaa\", \"amount\": \"$#,###.##\"} Please merge the files by the date column and keep every row. ");
    }
    body
}

fn request(text: String) -> LlmRequest {
    LlmRequest {
        role: Role::Builder,
        messages: vec![ChatMessage::new(ChatRole::System, text)],
        schema: None,
    }
}

/// The mean wall-clock and CPU time of one check over enough runs to last
/// ~0.5 s.
fn time_check(mut check: impl FnMut() -> usize) -> (Duration, Duration) {
    let mut runs = 0u32;
    let mut sink = 0;
    let (t, c) = (Instant::now(), cpu_time());
    while runs < 20 || t.elapsed() < Duration::from_millis(500) {
        sink += check();
        runs += 1;
    }
    std::hint::black_box(sink);
    (t.elapsed() / runs, (cpu_time() - c) / runs)
}

/// The CPU time this process has used: on a machine shared with other
/// work, wall-clock time also counts the time other processes ran.
#[allow(unsafe_code)]
fn cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `clock_gettime` writes one `timespec`, which we own.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) } == 0;
    if !ok {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// The naive baseline (see the file's doc).
struct Naive {
    tokens: HashSet<String>,
}

impl Naive {
    fn build(path: &Path) -> std::io::Result<Self> {
        let mut tokens = HashSet::new();
        let mut csv = csv::ReaderBuilder::new().from_path(path)?;
        let mut record = csv::StringRecord::new();
        while csv
            .read_record(&mut record)
            .map_err(std::io::Error::other)?
        {
            for cell in record.iter() {
                for t in cell.split(|c: char| !c.is_alphanumeric()) {
                    if t.chars().count() >= 4 {
                        tokens.insert(t.to_lowercase());
                    }
                }
            }
        }
        Ok(Self { tokens })
    }

    fn check(&self, text: &str) -> usize {
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|t| t.chars().count() >= 4 && self.tokens.contains(&t.to_lowercase()))
            .count()
    }
}
