//! What the benchmark examples share: the generated CSV of issue 16
//! (`region,product,amount,qty,date`, 8 regions).

use std::io::{BufWriter, Write};
use std::path::Path;

/// Writes about `size` bytes of the benchmark CSV to `path`.
pub fn generate(path: &Path, size: u64) -> std::io::Result<()> {
    let regions = [
        "North", "South", "East", "West", "Central", "Alpine", "Coastal", "Lakes",
    ];
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    w.write_all(b"region,product,amount,qty,date\n")?;
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut written = 0u64;
    while written < size {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let line = format!(
            "{},P{:04},{}.{:02},{},2024-{:02}-{:02}\n",
            regions[(x % 8) as usize],
            (x >> 8) % 5000,
            (x >> 20) % 10_000,
            (x >> 40) % 100,
            (x >> 48) % 50 + 1,
            (x >> 54) % 12 + 1,
            (x >> 58) % 28 + 1
        );
        w.write_all(line.as_bytes())?;
        written += line.len() as u64;
    }
    w.flush()
}
