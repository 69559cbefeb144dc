//! Benchmark of the privacy guard: builds the index of a generated ~100 MB
//! CSV, then times checking a ~100 KB outbound request against it.
//! Run: `bench/privacy/run.sh` (release build). Prints one Markdown table row.

use std::io::Write;
use std::time::Instant;

use maskflow_core::privacy::GuardIndex;
use maskflow_core::providers::{ChatMessage, ChatRole, LlmRequest, Role};

fn main() -> std::io::Result<()> {
    let target_mb: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100);
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("big.csv");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path)?);
        writeln!(f, "id,customer,email,amount,sku,date,notes")?;
        let mut i: u64 = 0;
        let mut written = 0usize;
        let names = [
            "Zebulon",
            "Ottoline",
            "Marguerite",
            "Bartholomew",
            "Ximena",
            "Leopold",
        ];
        while written < target_mb * 1024 * 1024 {
            let n = names[(i % 6) as usize];
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
    }
    let size = std::fs::metadata(&path)?.len();
    let t = Instant::now();
    let mut index = GuardIndex::new();
    index.add_file(&path, "big.csv", u64::MAX);
    let build = t.elapsed();

    // ~100 KB of prompt text: masked-looking JSON plus prose.
    let mut body = String::new();
    while body.len() < 100 * 1024 {
        body.push_str("{\"customer\": \"Aaaaaaa Aaaaaaaa\", \"amount\": \"$#,###.##\"} Please merge the files by the date column and keep every row. ");
    }
    let request = LlmRequest {
        role: Role::Builder,
        messages: vec![ChatMessage::new(ChatRole::System, body.clone())],
        schema: None,
    };
    let runs = 200;
    let t = Instant::now();
    let mut found = 0;
    for _ in 0..runs {
        found += index.check_request(&request, &[]).len();
    }
    let per = t.elapsed() / runs;
    println!(
        "| {:.0} MB file, {} indexed values | index built in {:.2} s | {} KB request checked in {:.2} ms | matches: {} |",
        size as f64 / 1e6,
        index.len(),
        build.as_secs_f64(),
        body.len() / 1024,
        per.as_secs_f64() * 1e3,
        found / runs as usize
    );
    Ok(())
}
