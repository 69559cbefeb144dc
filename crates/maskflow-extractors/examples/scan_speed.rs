//! Benchmark helper: the CSV scan alone, per kernel, on the first 256 KiB
//! of FILE held in the L2 cache, so neither the disk nor the page cache is
//! measured. Prints GB/s of this thread's CPU time (so other work on the
//! machine does not count), and bytes per cycle at the CPU's reported clock.
//! `cargo run --release -p maskflow-extractors --example scan_speed FILE`

use std::io::Read;
use std::time::{Duration, Instant};

use maskflow_extractors::csv::count::{Kernel, count_slice};

const SIZE: usize = 256 * 1024;
const ROUNDS: usize = 4000;

fn main() {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: scan_speed FILE");
        std::process::exit(2);
    };
    let mut data = Vec::with_capacity(SIZE);
    let read = std::fs::File::open(&path).and_then(|f| f.take(SIZE as u64).read_to_end(&mut data));
    if let Err(e) = read {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
    // The clock the kernel reports (the nominal one where it cannot see boosts).
    let mhz: f64 = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("cpu MHz"))
                .and_then(|l| l.split(':').nth(1))
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(f64::NAN);
    for kernel in Kernel::available() {
        let mut best = f64::INFINITY;
        let mut records = None;
        // Best of five: the machine may be busy with other work.
        for _ in 0..5 {
            let (start, wall) = (cpu_time(), Instant::now());
            for _ in 0..ROUNDS / 5 {
                records =
                    std::hint::black_box(count_slice(std::hint::black_box(&data), b',', kernel));
            }
            let spent = cpu_time()
                .zip(start)
                .map_or_else(|| wall.elapsed(), |(end, start)| end - start);
            best = best.min(spent.as_secs_f64());
        }
        let bytes = (data.len() * (ROUNDS / 5)) as f64;
        let gbs = bytes / best / 1e9;
        println!(
            "{kernel:?}\t{gbs:.2} GB/s\t{:.2} bytes/cycle at {mhz:.0} MHz\t{records:?} records",
            gbs * 1e3 / mhz
        );
    }
}

/// This thread's time on a CPU, from the scheduler (nanoseconds); `None`
/// where /proc does not say (then wall time is used).
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}
