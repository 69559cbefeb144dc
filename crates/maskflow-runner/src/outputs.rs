//! What a run left in `outputs/`: each file with its size and, for CSV
//! files, a row count and the first rows (shown locally only, never sent).

use std::path::Path;

use serde::{Deserialize, Serialize};

/// How many rows of a CSV output are kept for the preview (header first).
pub const PREVIEW_ROWS: usize = 6;

/// One file a run wrote.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OutputFile {
    /// Its path under `outputs/`, with `/` separators.
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
    /// For CSV files: the number of data rows (the header not counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_count: Option<u64>,
    /// For CSV files: the first rows, header first (local only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview_rows: Option<Vec<Vec<String>>>,
}

/// The total size of every file under `dir`.
pub fn total_size(dir: &Path) -> u64 {
    sum_tree(dir, |meta| if meta.is_file() { meta.len() } else { 0 })
}

/// The disk space everything under `dir` takes (files, folders and links,
/// never followed), in bytes: a sparse file counts its length, a folder
/// with many entries its blocks.
pub fn disk_usage(dir: &Path) -> u64 {
    sum_tree(dir, footprint)
}

/// The sum of `size` over every entry under `dir`, links never followed.
fn sum_tree(dir: &Path, size: impl Fn(&std::fs::Metadata) -> u64) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
                continue;
            };
            total += size(&meta);
            if meta.is_dir() {
                stack.push(e.path());
            }
        }
    }
    total
}

/// The larger of a file's length and its allocated blocks.
fn footprint(meta: &std::fs::Metadata) -> u64 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        meta.len().max(meta.blocks().saturating_mul(512))
    }
    #[cfg(not(unix))]
    {
        meta.len()
    }
}

/// Lists the files under `dir` (sorted by name), with CSV previews.
pub fn list(dir: &Path) -> Vec<OutputFile> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(path),
                Ok(t) if t.is_file() => {
                    let Ok(rel) = path.strip_prefix(dir) else {
                        continue;
                    };
                    let name = rel
                        .components()
                        .map(|c| c.as_os_str().to_string_lossy().into_owned())
                        .collect::<Vec<_>>()
                        .join("/");
                    let size = e.metadata().map(|m| m.len()).unwrap_or(0);
                    let is_csv = name.to_ascii_lowercase().ends_with(".csv");
                    let (row_count, preview_rows) = if is_csv {
                        match csv_summary(&path) {
                            Some((n, rows)) => (Some(n), Some(rows)),
                            None => (None, None),
                        }
                    } else {
                        (None, None)
                    };
                    out.push(OutputFile {
                        name,
                        size,
                        row_count,
                        preview_rows,
                    });
                }
                _ => {}
            }
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

fn csv_summary(path: &Path) -> Option<(u64, Vec<Vec<String>>)> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_path(path)
        .ok()?;
    let mut rows = Vec::new();
    let mut count: u64 = 0;
    let mut record = csv::ByteRecord::new();
    while reader.read_byte_record(&mut record).ok()? {
        if rows.len() < PREVIEW_ROWS {
            rows.push(
                record
                    .iter()
                    .map(|f| String::from_utf8_lossy(f).into_owned())
                    .collect(),
            );
        }
        count += 1;
    }
    Some((count.saturating_sub(1), rows))
}
