//! Snapshot tests of the masked extracts of the committed fixtures (the
//! samples' CSV, `tests/fixtures/excel` and `tests/fixtures/docs`): any change
//! in what the model is shown of a file shows up as a diff of a `.snap` file
//! under `src/snapshots/`. Review with `cargo insta review`, or rerun with
//! `INSTA_UPDATE=always` and read the diff. The image's OCR text needs
//! Tesseract (installed by scripts/setup.sh), as the extractor does.

use std::path::{Path, PathBuf};

use crate::{ExtractOptions, extract_path};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The extract as pretty JSON, or the one-line error for a file that cannot
/// be read (encrypted, damaged).
fn masked(path: &Path) -> String {
    match extract_path(path, &ExtractOptions::default(), &mut |_| {}) {
        Ok(extract) => serde_json::to_string_pretty(&extract).expect("serialises"),
        // Errors name the file by its full path, which differs per checkout.
        Err(e) => {
            let folder = format!("{}/", path.parent().expect("folder").display());
            format!("error: {}", e.to_string().replace(&folder, ""))
        }
    }
}

fn files(dir: &str, exts: &[&str]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(repo().join(dir))
        .expect("fixtures folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            p.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| exts.contains(&e))
        })
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no fixtures in {dir}");
    out
}

fn snapshot_all(dir: &str, exts: &[&str]) {
    for path in files(dir, exts) {
        let name = path.file_name().and_then(|n| n.to_str()).expect("name");
        insta::assert_snapshot!(name.replace('.', "_"), masked(&path));
    }
}

#[test]
fn csv_samples() {
    snapshot_all("samples", &["csv"]);
}

#[test]
fn excel_fixtures() {
    snapshot_all("tests/fixtures/excel", &["xlsx", "xls", "xlsb", "ods"]);
}

#[test]
fn document_fixtures() {
    snapshot_all("tests/fixtures/docs", &["pdf", "docx", "png", "gif"]);
}
