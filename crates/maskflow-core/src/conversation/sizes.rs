//! The builder told sizes and limits (issues 40 point 6, 43 point 2): each
//! input's bytes and rows, and the run's memory, time, disk and output
//! limits, so a script for a 3 GB file is written for it (out of core)
//! instead of for "limited memory". Pure: the engine measures the files
//! and passes the limits in force.

use std::collections::BTreeMap;

use serde_json::Value;

use maskflow_llm::Part;
use maskflow_runner::Limits;

/// What the builder is told about the run's size: the input files' sizes
/// on disk (by the extract's file name) and the limits of the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSizes {
    /// Bytes of each input file, by its extract's `filename`.
    pub bytes: BTreeMap<String, u64>,
    /// The limits the test run and every re-run get.
    pub limits: Limits,
}

/// `2.0 GiB`, `295 MiB`, `12 KiB`, `532 bytes`: binary units, as the
/// limits are set.
pub fn binary_bytes(n: u64) -> String {
    const KIB: u64 = 1 << 10;
    const MIB: u64 = 1 << 20;
    const GIB: u64 = 1 << 30;
    let f = n as f64;
    if n >= GIB {
        format!("{:.1} GiB", f / GIB as f64)
    } else if n >= MIB {
        format!("{:.0} MiB", f / MIB as f64)
    } else if n >= KIB {
        format!("{:.0} KiB", f / KIB as f64)
    } else {
        format!("{n} bytes")
    }
}

/// `12,000,000`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A duration in words: `5 min`, `90 s`, `2 h`.
fn duration(seconds: u64) -> String {
    if seconds >= 3600 && seconds.is_multiple_of(3600) {
        format!("{} h", seconds / 3600)
    } else if seconds >= 60 && seconds.is_multiple_of(60) {
        format!("{} min", seconds / 60)
    } else {
        format!("{seconds} s")
    }
}

/// One line per input file: its name as sent, its size, and its rows when
/// it is a table (a workbook: each sheet's).
fn file_lines(extracts: &Value, sizes: &RunSizes) -> Vec<String> {
    extracts
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let name = e["filename"].as_str()?;
            let mut facts = Vec::new();
            if let Some(b) = sizes.bytes.get(name) {
                facts.push(if *b < 1 << 10 {
                    binary_bytes(*b)
                } else {
                    format!("{} ({} bytes)", binary_bytes(*b), grouped(*b))
                });
            }
            let kind = e["kind"].as_str().unwrap_or("csv");
            match (kind, e["sheets"].as_array()) {
                ("excel", Some(sheets)) if sheets.len() == 1 => {
                    if let Some(rows) = sheets[0]["row_count"].as_u64() {
                        facts.push(format!("{} rows", grouped(rows)));
                    }
                }
                ("excel", Some(sheets)) => {
                    let rows: Vec<String> = sheets
                        .iter()
                        .filter_map(|s| {
                            Some(format!(
                                "{} rows in `{}`",
                                grouped(s["row_count"].as_u64()?),
                                s["name"].as_str()?
                            ))
                        })
                        .collect();
                    facts.extend(rows);
                }
                ("csv" | "excel", _) => {
                    if let Some(rows) = e["row_count"].as_u64() {
                        facts.push(format!("{} rows", grouped(rows)));
                    }
                }
                _ => {}
            }
            (!facts.is_empty()).then(|| format!("- {name}: {}", facts.join(", ")))
        })
        .collect()
}

/// The limits in words.
fn limits_text(l: &Limits) -> String {
    format!(
        "Limits of every run: memory {} (all processes together; past it the run is stopped), time {} (CPU {}), disk {} \
for all it writes in its folder (any one file too; DuckDB's `.tmp` spill counts), {} processes and threads; {} of stdout and of \
stderr kept.",
        binary_bytes(l.memory_bytes),
        duration(l.timeout.as_secs()),
        duration(l.cpu_seconds),
        binary_bytes(l.output_bytes),
        l.max_processes,
        binary_bytes(l.stdio_bytes as u64),
    )
}

/// Whether an input is large for the run's memory: over a tenth of it.
pub fn large_for_memory(sizes: &RunSizes) -> bool {
    sizes
        .bytes
        .values()
        .any(|b| b.saturating_mul(10) > sizes.limits.memory_bytes)
}

/// The sizes-and-limits block of the builder's prompt: Maskflow's wording,
/// the input files' sizes and rows (figures Maskflow computed, beside the
/// file names as the extracts send them), the limits, and — when an input
/// is large for the memory limit — when to use DuckDB rather than pandas.
pub fn sizes_parts(extracts: &Value, sizes: &RunSizes) -> Vec<Part> {
    let mut parts = Vec::new();
    let lines = file_lines(extracts, sizes);
    if !lines.is_empty() {
        parts.push(Part::instructions("Input sizes:\n"));
        parts.push(Part::extract(lines.join("\n")));
        parts.push(Part::instructions("\n"));
    }
    parts.push(Part::instructions(limits_text(&sizes.limits)));
    if large_for_memory(sizes) {
        parts.push(Part::instructions(format!(
            "\nAn input is large for this memory limit: {}",
            maskflow_pyenv::curated::DUCKDB_OR_PANDAS
        )));
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Duration;

    #[test]
    fn sizes_and_limits_read_as_figures() {
        assert_eq!(binary_bytes(2 << 30), "2.0 GiB");
        assert_eq!(binary_bytes(309_237_645), "295 MiB");
        assert_eq!(binary_bytes(532), "532 bytes");
        assert_eq!(grouped(12_000_000), "12,000,000");
        assert_eq!(grouped(999), "999");
        assert_eq!(duration(300), "5 min");
        assert_eq!(duration(90), "90 s");
    }

    #[test]
    fn every_input_s_bytes_and_rows_and_every_limit_are_told() {
        let extracts = json!([
            {"filename": "orders.csv", "kind": "csv", "row_count": 12_000_000u64},
            {"filename": "book.xlsx", "kind": "excel", "row_count": 40,
             "sheets": [{"name": "Sales", "row_count": 40}, {"name": "Costs", "row_count": 7}]},
            {"filename": "memo.pdf", "kind": "pdf", "row_count": 0}
        ]);
        let sizes = RunSizes {
            bytes: [
                ("orders.csv".to_owned(), 309_237_645u64),
                ("book.xlsx".to_owned(), 20_480),
                ("memo.pdf".to_owned(), 900),
            ]
            .into(),
            limits: Limits {
                memory_bytes: 2 << 30,
                timeout: Duration::from_secs(600),
                cpu_seconds: 600,
                output_bytes: 4 << 30,
                ..Limits::default()
            },
        };
        let text: String = sizes_parts(&extracts, &sizes)
            .iter()
            .map(Part::text)
            .collect();
        assert!(
            text.contains("- orders.csv: 295 MiB (309,237,645 bytes), 12,000,000 rows"),
            "{text}"
        );
        assert!(
            text.contains(
                "- book.xlsx: 20 KiB (20,480 bytes), 40 rows in `Sales`, 7 rows in `Costs`"
            ),
            "{text}"
        );
        assert!(text.contains("- memo.pdf: 900 bytes\n"), "{text}");
        assert!(text.contains("memory 2.0 GiB"), "{text}");
        assert!(text.contains("time 10 min (CPU 10 min)"), "{text}");
        assert!(text.contains("disk 4.0 GiB"), "{text}");
        assert!(text.contains("64 KiB of stdout"), "{text}");
        assert!(
            text.contains("use duckdb"),
            "295 MiB is large for 2 GiB: {text}"
        );
        // Without a measured file, the limits alone.
        let none = RunSizes {
            bytes: BTreeMap::new(),
            limits: Limits::default(),
        };
        let text: String = sizes_parts(&json!([]), &none)
            .iter()
            .map(Part::text)
            .collect();
        assert!(text.starts_with("Limits of every run"), "{text}");
        assert!(!text.contains("duckdb"), "nothing large: {text}");
    }
}
