//! The embedded engine's side of `bench/local`: loads MODEL, warms up,
//! streams one reply of at most N tokens, and prints one JSON line with the
//! time to first token, tokens per second (after the first), and the
//! process's resident memory before loading, while loaded and after
//! unloading.
//!
//!     local_bench MODEL.gguf [N_TOKENS] [THREADS]

use std::sync::{Arc, Mutex};
use std::time::Instant;

use maskflow_local::{Engine, EngineOptions, Request, Speaker};

/// The prompt both engines answer (bench/local/client.py sends the same).
const PROMPT: &str = "Write a long story about a lighthouse keeper and a storm.";

/// Resident memory in MiB (Linux `VmRSS`; 0 elsewhere).
fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn request(max_tokens: u32) -> Request {
    Request {
        messages: vec![
            (Speaker::System, "You are a helpful assistant.".into()),
            (Speaker::User, PROMPT.into()),
        ],
        schema: None,
        max_tokens,
        temperature: 0.0,
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let model = args
        .next()
        .ok_or("usage: local_bench MODEL.gguf [N_TOKENS] [THREADS]")?;
    let n: u32 = args.next().map_or(Ok(256), |a| a.parse())?;
    let threads: u32 = args.next().map_or(Ok(1), |a| a.parse())?;
    let before = rss_mib();
    let mut options = EngineOptions::new(model);
    options.context = Some(2048);
    options.threads = Some(threads);
    let engine = Engine::start(options)?;
    let t = Instant::now();
    engine.generate(request(4), Arc::default(), |_| {})?;
    let load_ms = t.elapsed().as_secs_f64() * 1000.0;
    // Times of each piece, from the request's submission.
    let stamps = Arc::new(Mutex::new(Vec::<f64>::new()));
    let sink = stamps.clone();
    let start = Instant::now();
    let g = engine.generate(request(n), Arc::default(), move |_| {
        if let Ok(mut s) = sink.lock() {
            s.push(start.elapsed().as_secs_f64());
        }
    })?;
    let loaded = rss_mib();
    let stamps = stamps.lock().map_err(|_| "lock")?.clone();
    let (first, last) = (stamps.first().copied(), stamps.last().copied());
    let (first, last) = (first.ok_or("no token")?, last.ok_or("no token")?);
    let after_first = f64::from(g.output_tokens.saturating_sub(1));
    let tps = if last > first {
        after_first / (last - first)
    } else {
        0.0
    };
    engine.unload();
    let unloaded = rss_mib();
    println!(
        "{{\"engine\":\"embedded\",\"tokens\":{},\"ttft_ms\":{:.1},\"tokens_per_s\":{:.2},\"load_ms\":{:.1},\"rss_before_mib\":{:.1},\"rss_loaded_mib\":{:.1},\"rss_unloaded_mib\":{:.1}}}",
        g.output_tokens,
        first * 1000.0,
        tps,
        load_ms,
        before,
        loaded,
        unloaded
    );
    Ok(())
}
