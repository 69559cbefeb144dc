//! The CSV extractor end to end, over files written by the tests.

use std::io::Write;
use std::path::{Path, PathBuf};

use maskflow_extractors::{ExtractOptions, FileExtract, FileKind, Progress, Registry};

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write fixture");
    path
}

fn extract(path: &Path) -> FileExtract {
    Registry::with_defaults()
        .extract(path, &ExtractOptions::default(), &mut |_| {})
        .expect("extract")
}

/// Asserts that none of `raw` appears anywhere in the extract's JSON.
fn assert_no_raw(extract: &FileExtract, raw: &[&str]) {
    let json = serde_json::to_string(extract).expect("json");
    for value in raw {
        assert!(
            !json.contains(value),
            "raw value {value:?} leaked into {json}"
        );
    }
}

#[test]
fn quoted_fields_embedded_newlines_and_escaped_quotes() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "orders.csv",
        b"id,customer,note\r\n1,\"Smith, John\",\"said \"\"hi\"\"\nthen left\"\r\n2,\"Doe, Jane\",ok\r\n3,Bob,\"a,b\"\r\n",
    );
    let e = extract(&path);
    assert_eq!(e.kind, FileKind::Csv);
    assert_eq!(e.columns, ["id", "customer", "note"]);
    assert_eq!(e.row_count, 3);
    assert_eq!(e.has_header, Some(true));
    assert_eq!(
        e.sample_rows[0],
        ["#", "Aaaaa, Aaaa", "aaaa \"aa\"\naaaa aaaa"]
    );
    assert_no_raw(&e, &["Smith", "John", "Jane", "Bob", "hi", "left"]);
}

#[test]
fn delimiters_are_sniffed() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text, delim) in [
        ("semi.csv", "a;b;c\n1,5;2;x\n3;4;y\n", ";"),
        ("tabs.tsv", "a\tb\n1\t2\n", "\t"),
        ("pipes.txt", "a|b|c\nx|y|z\n1|2|3\n", "|"),
    ] {
        let e = extract(&write(dir.path(), name, text.as_bytes()));
        assert_eq!(e.text_format.as_ref().unwrap().delimiter, delim, "{name}");
        assert_eq!(e.columns, ["a", "b", "c"][..e.columns.len()], "{name}");
    }
}

#[test]
fn encodings_bom_utf16_and_windows_1252() {
    let dir = tempfile::tempdir().unwrap();
    let utf8_bom = write(
        dir.path(),
        "bom.csv",
        "\u{feff}name,city\nÉlodie,Zürich\n".as_bytes(),
    );
    let e = extract(&utf8_bom);
    assert_eq!(e.columns, ["name", "city"]);
    assert_eq!(e.sample_rows, [["Aaaaaa", "Aaaaaa"]]);

    let mut utf16 = vec![0xFF, 0xFE];
    for unit in "name,city\r\nJosé,Köln\r\n\"Ann\nLee\",Oslo\r\n".encode_utf16() {
        utf16.extend_from_slice(&unit.to_le_bytes());
    }
    let e = extract(&write(dir.path(), "utf16.csv", &utf16));
    assert_eq!(e.text_format.as_ref().unwrap().encoding, "UTF-16LE");
    assert_eq!(e.columns, ["name", "city"]);
    assert_eq!(e.row_count, 2);
    assert_eq!(e.sample_rows[0], ["Aaaa", "Aaaa"]);
    assert_no_raw(&e, &["José", "Köln", "Oslo"]);

    let e = extract(&write(
        dir.path(),
        "latin.csv",
        b"name,city\nJos\xe9,K\xf6ln\n",
    ));
    assert_eq!(e.text_format.as_ref().unwrap().encoding, "windows-1252");
    assert_eq!(e.sample_rows, [["Aaaa", "Aaaa"]]);
}

#[test]
fn headerless_files_do_not_leak_their_first_record() {
    let dir = tempfile::tempdir().unwrap();
    let e = extract(&write(
        dir.path(),
        "people.csv",
        b"17,alice@example.com,2024-01-15\n18,bob@example.com,2024-02-01\n",
    ));
    assert_eq!(e.has_header, Some(false));
    assert_eq!(e.columns, ["column_1", "column_2", "column_3"]);
    assert_eq!(e.row_count, 2);
    assert_no_raw(&e, &["alice", "example", "17"]);
}

#[test]
fn ragged_rows_are_padded_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let e = extract(&write(dir.path(), "ragged.csv", b"a,b,c\n1,2\n3,4,5\n"));
    assert_eq!(e.row_count, 2);
    assert_eq!(e.sample_rows[0], ["#", "#", ""]);
    assert!(
        e.warnings.iter().any(|w| w.contains("fewer fields")),
        "{:?}",
        e.warnings
    );
}

#[test]
fn blank_lines_are_not_records_and_quotes_mid_field_fall_back() {
    let dir = tempfile::tempdir().unwrap();
    let e = extract(&write(dir.path(), "blank.csv", b"a,b\n\n1,2\n\r\n3,4\n\n"));
    assert_eq!(e.row_count, 2);
    let e = extract(&write(
        dir.path(),
        "inches.csv",
        b"name,height\nAl,5'10\"\nBo,6'1\"\n",
    ));
    assert_eq!(e.row_count, 2);
}

#[test]
fn samples_option_and_row_count_of_a_bigger_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut body = String::from("n,text\n");
    for i in 0..30_000 {
        body.push_str(&format!("{i},\"line {i}\nsecond \"\"part\"\"\"\n"));
    }
    let path = write(dir.path(), "big.csv", body.as_bytes());
    let mut seen = Vec::new();
    let e = Registry::with_defaults()
        .extract(
            &path,
            &ExtractOptions::with_samples(50),
            &mut |p: Progress| seen.push(p),
        )
        .unwrap();
    assert_eq!(e.row_count, 30_000);
    assert_eq!(e.sample_rows.len(), 50);
    let last = seen.last().expect("progress was reported");
    assert_eq!(last.done, last.total);
}

#[test]
fn a_huge_single_field_is_cut_and_memory_stays_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.csv");
    let mut f = std::fs::File::create(&path).unwrap();
    f.write_all(b"id,blob\n1,\"").unwrap();
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..12 {
        f.write_all(&chunk).unwrap();
    }
    f.write_all(b"\"\n2,short\n").unwrap();
    drop(f);
    let e = extract(&path);
    assert_eq!(e.columns, ["id", "blob"]);
    assert_eq!(e.row_count, 2, "the long record and the one after it");
    assert!(e.sample_rows[0][1].chars().count() <= 200);
}

#[test]
fn a_file_of_only_line_breaks_has_no_rows() {
    let dir = tempfile::tempdir().unwrap();
    let e = extract(&write(dir.path(), "blank.csv", b"\n\r\n\n"));
    assert_eq!(e.row_count, 0);
    assert!(e.columns.is_empty());
}
