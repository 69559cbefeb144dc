//! `maskflow extract` as a user runs it: JSON on stdout, one line per bad
//! file on stderr, exit code 1, and never a panic.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn maskflow(args: &[&Path]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_maskflow"))
        .arg("extract")
        .args(args)
        .output()
        .expect("run maskflow")
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write fixture");
    path
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

/// Pseudo-random bytes (a fixed LCG: no dependency, same bytes every run).
fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed;
    (0..len)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) as u8
        })
        .collect()
}

fn xlsx_bytes() -> Vec<u8> {
    let mut book = rust_xlsxwriter::Workbook::new();
    let sheet = book.add_worksheet();
    sheet.write(0, 0, "name").unwrap();
    for row in 1..200u32 {
        sheet.write(row, 0, format!("Customer {row}")).unwrap();
    }
    book.save_to_buffer().unwrap()
}

/// A zip whose one member claims to inflate to ~4 GB: a bomb by its own declaration.
fn zip_bomb() -> Vec<u8> {
    let mut buf = std::io::Cursor::new(Vec::new());
    let mut zip = zip::ZipWriter::new(&mut buf);
    zip.start_file("xl/workbook.xml", zip::write::SimpleFileOptions::default())
        .unwrap();
    zip.write_all(&[b'a'; 4096]).unwrap();
    zip.finish().unwrap();
    let mut bytes = buf.into_inner();
    for (signature, offset) in [(&b"PK\x03\x04"[..], 22), (&b"PK\x01\x02"[..], 24)] {
        let at = bytes.windows(4).position(|w| w == signature).unwrap() + offset;
        bytes[at..at + 4].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
    }
    bytes
}

#[test]
fn good_files_print_json_and_bad_files_one_line_each() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = write(
        d,
        "sales.csv",
        b"date,product_id,revenue\n2024-01-15,PROD-194211,\"$1,234.56\"\n",
    );
    let folder = d.join("folder");
    std::fs::create_dir(&folder).unwrap();
    let mut xlsx = xlsx_bytes();
    xlsx.truncate(xlsx.len() / 2);
    let mut one_line = vec![b'x'; 32 << 20];
    one_line.extend_from_slice(b"y");
    let bad = [
        write(d, "zero.csv", b""),
        folder,
        d.join("missing.csv"),
        write(d, "random.csv", &noise(10_000, 1)),
        write(d, "random.xlsx", &noise(10_000, 2)),
        write(d, "random.pdf", &noise(10_000, 3)),
        write(d, "random.docx", &noise(10_000, 4)),
        write(d, "random.png", &noise(10_000, 5)),
        write(d, "truncated.xlsx", &xlsx),
        write(d, "bomb.xlsx", &zip_bomb()),
        // Found by fuzzing: calamine panics on this workbook; it must stay one line.
        fixture("excel/fuzz-calamine-panic.xls"),
        // Found by fuzzing: a sector chain that calamine follows until memory runs out.
        fixture("excel/fuzz-cfb-chain-loop.xls"),
        // Found by fuzzing: a sheet declaring ~10^13 cells, which calamine reserves up front.
        fixture("excel/fuzz-huge-dimensions.xls"),
    ];
    let also_good = [
        write(d, "latin1.csv", b"name\nJos\xe9\n"),
        write(d, "blank.csv", b"\n\n"),
        write(d, "one-line.csv", &one_line),
    ];
    let mut args: Vec<&Path> = vec![&good];
    args.extend(bad.iter().map(PathBuf::as_path));
    args.extend(also_good.iter().map(PathBuf::as_path));
    let out = maskflow(&args);

    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), bad.len(), "one line per bad file:\n{stderr}");
    for (line, path) in lines.iter().zip(&bad) {
        assert!(
            line.starts_with(&format!("error: {}: ", path.display())),
            "{line}"
        );
    }
    assert_eq!(out.status.code(), Some(1));

    let extracts: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    let extracts = extracts.as_array().expect("a JSON array");
    assert_eq!(extracts.len(), 1 + also_good.len());
    assert_eq!(
        extracts[0]["columns"],
        serde_json::json!(["date", "product_id", "revenue"])
    );
    assert_eq!(
        extracts[0]["sample_rows"],
        serde_json::json!([["####-##-##", "AAAA-######", "$#,###.##"]])
    );
    assert_eq!(extracts[0]["row_count"], 1);
    assert_eq!(extracts[3]["row_count"], 1, "the 32 MiB line is one record");
}

#[test]
fn an_unreadable_file_is_an_error_not_a_panic() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "secret.csv", b"a,b\n1,2\n");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::File::open(&path).is_ok() {
        eprintln!("skipped: running as root, permissions do not bind");
        return;
    }
    let out = maskflow(&[&path]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("permission denied"));
}

#[test]
fn samples_flag_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "a.csv", b"a\n1\n");
    let out = Command::new(env!("CARGO_BIN_EXE_maskflow"))
        .args(["extract", "--samples", "51"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "clap rejects it");
}
