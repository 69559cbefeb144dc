//! Integration tests of the Excel extractor: workbooks written by real
//! writers (rust_xlsxwriter here; xlwt, odfpy, pyxlsbwriter and
//! msoffcrypto-tool for the committed fixtures in `tests/fixtures/excel/`),
//! and bad input that must give a typed, one-line error.

use std::io::Write;
use std::path::{Path, PathBuf};

use maskflow_extractors::excel::ExcelExtractor;
use maskflow_extractors::{
    ExtractError, ExtractOptions, Extractor, FileExtract, FileKind, Input, Progress, SheetExtract,
    extract_path, sniff,
};
use rust_xlsxwriter::{ExcelDateTime, Format, Formula, Workbook};

/// Raw values written into the test workbooks; none may appear in an extract.
const RAW: &[&str] = &[
    "John Smith",
    "Jane Doe",
    "Zoe Quinn",
    "Paris",
    "London",
    "Zurich",
    "2024-01-15",
    "2024-02-01",
    "10:30",
    "2023-12-31",
    "1234.5",
    "2469",
    "PROD-194211",
    "PROD-194212",
    "12.5",
    "#DIV/0!",
];

/// Raw booleans, which may only appear as JSON literals (`"has_header":true`), never as values.
const RAW_QUOTED: &[&str] = &["\"true\"", "\"false\"", "\"TRUE\"", "\"FALSE\""];

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/excel")
        .join(name)
}

fn extract(path: &Path) -> Result<FileExtract, ExtractError> {
    extract_path(path, &ExtractOptions::default(), &mut |_| {})
}

fn assert_no_raw_value(extract: &FileExtract) {
    let json = serde_json::to_string(extract).expect("an extract serializes");
    for raw in RAW.iter().chain(RAW_QUOTED) {
        assert!(
            !json.contains(raw),
            "raw value {raw:?} leaked into the extract: {json}"
        );
    }
}

fn row(cells: &[&str]) -> Vec<String> {
    cells.iter().map(|c| (*c).to_owned()).collect()
}

/// The "People" sheet every fixture holds, as the extract must show it.
fn expected_people() -> SheetExtract {
    SheetExtract {
        header_row: None,
        rows_above: Vec::new(),
        units: Vec::new(),
        name: "People".into(),
        columns: row(&["name", "city", "joined", "amount", "active"]),
        sample_rows: vec![
            row(&["Aaaa Aaaaa", "Aaaaa", "####-##-##", "####.#", "aaaa"]),
            row(&["Aaaa Aaa", "Aaaaaa", "####-##-##A##:##:##", "#", "aaaaa"]),
            row(&["Aaa Aaaaa", "Aaaaaa", "####-##-##", "##", "aaaa"]),
        ],
        row_count: 3,
        has_header: Some(true),
        categories: Vec::new(),
        profile: None,
    }
}

/// The headerless "Codes" sheet: its first row is data.
fn expected_codes() -> SheetExtract {
    SheetExtract {
        header_row: None,
        rows_above: Vec::new(),
        units: Vec::new(),
        name: "Codes".into(),
        columns: row(&["column_1", "column_2", "column_3"]),
        sample_rows: vec![
            row(&["#", "AAAA-######", "##.#"]),
            row(&["#", "AAAA-######", "##"]),
        ],
        row_count: 2,
        has_header: Some(false),
        categories: Vec::new(),
        profile: None,
    }
}

/// Writes a workbook: an empty first sheet, "People" (dates, a date-time,
/// numbers, booleans, formulas with cached values, formatted blank rows
/// after the data) and the headerless "Codes".
fn write_xlsx(path: &Path) {
    let mut book = Workbook::new();
    let date = Format::new().set_num_format("yyyy-mm-dd");
    let stamp = Format::new().set_num_format("yyyy-mm-dd hh:mm");
    let bold = Format::new().set_bold();

    book.add_worksheet().set_name("Empty").expect("sheet name");

    let people = book.add_worksheet();
    people.set_name("People").expect("sheet name");
    let header = [
        "name", "city", "joined", "amount", "active", "double", "ratio",
    ];
    people.write_row(0, 0, header).expect("header");
    let rows: [(&str, &str, ExcelDateTime, f64, bool); 3] = [
        (
            "John Smith",
            "Paris",
            ExcelDateTime::from_ymd(2024, 1, 15).expect("date"),
            1234.5,
            true,
        ),
        (
            "Jane Doe",
            "London",
            ExcelDateTime::from_ymd(2024, 2, 1)
                .and_then(|d| d.and_hms(10, 30, 0))
                .expect("date-time"),
            3.0,
            false,
        ),
        (
            "Zoe Quinn",
            "Zurich",
            ExcelDateTime::from_ymd(2023, 12, 31).expect("date"),
            42.0,
            true,
        ),
    ];
    for (i, (name, city, when, amount, active)) in rows.iter().enumerate() {
        let r = i as u32 + 1;
        people.write_string(r, 0, *name).expect("cell");
        people.write_string(r, 1, *city).expect("cell");
        let format = if i == 1 { &stamp } else { &date };
        people
            .write_datetime_with_format(r, 2, when, format)
            .expect("cell");
        people.write_number(r, 3, *amount).expect("cell");
        people.write_boolean(r, 4, *active).expect("cell");
        let doubled = (amount * 2.0).to_string();
        people
            .write_formula(
                r,
                5,
                Formula::new(format!("=D{}*2", r + 1)).set_result(doubled),
            )
            .expect("cell");
        people
            .write_formula(r, 6, Formula::new("=1/0").set_result("#DIV/0!"))
            .expect("cell");
    }
    // Formatted but empty cells below the data: trailing empty rows.
    for r in 4..40 {
        people.write_blank(r, 0, &bold).expect("blank");
    }

    let codes = book.add_worksheet();
    codes.set_name("Codes").expect("sheet name");
    codes.write_number(0, 0, 1).expect("cell");
    codes.write_string(0, 1, "PROD-194211").expect("cell");
    codes.write_number(0, 2, 12.5).expect("cell");
    codes.write_number(1, 0, 2).expect("cell");
    codes.write_string(1, 1, "PROD-194212").expect("cell");
    codes.write_number(1, 2, 13.0).expect("cell");

    book.save(path).expect("workbook saved");
}

#[test]
fn an_xlsx_gives_every_sheet_masked_and_counted() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("people.xlsx");
    write_xlsx(&path);

    let extract = extract(&path).expect("the workbook is extracted");

    assert_eq!(extract.kind, FileKind::Excel);
    assert_eq!(extract.filename, "people.xlsx");
    let sheets = extract.sheets.as_deref().expect("sheets");
    assert_eq!(sheets.len(), 3);
    assert_eq!(
        sheets[0],
        SheetExtract {
            header_row: None,
            rows_above: Vec::new(),
            units: Vec::new(),
            name: "Empty".into(),
            columns: vec![],
            sample_rows: vec![],
            row_count: 0,
            has_header: None,
            categories: Vec::new(),
            profile: None,
        }
    );
    let mut people = expected_people();
    people.columns.extend(row(&["double", "ratio"]));
    let extra = [["####", "#AAA/#!"], ["#", "#AAA/#!"], ["##", "#AAA/#!"]];
    for (sample, extra) in people.sample_rows.iter_mut().zip(extra) {
        sample.extend(extra.map(str::to_owned));
    }
    assert_eq!(sheets[1], people);
    assert_eq!(sheets[2], expected_codes());

    // The top level mirrors the first non-empty sheet.
    assert_eq!(extract.columns, people.columns);
    assert_eq!(extract.sample_rows, people.sample_rows);
    assert_eq!(extract.row_count, 3);
    assert_eq!(extract.has_header, Some(true));
    assert_no_raw_value(&extract);
}

#[test]
fn a_large_sheet_is_counted_exactly_with_progress() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("large.xlsx");
    let rows = 40_000u32;
    let mut book = Workbook::new();
    let sheet = book.add_worksheet();
    sheet.write_row(0, 0, ["id", "code"]).expect("header");
    for r in 1..=rows {
        sheet.write_number(r, 0, f64::from(r)).expect("cell");
        sheet
            .write_string(r, 1, format!("C-{}", r % 97))
            .expect("cell");
    }
    book.save(&path).expect("saved");

    let mut reports: Vec<Progress> = Vec::new();
    let extract = extract_path(&path, &ExtractOptions::with_samples(2), &mut |p| {
        reports.push(p)
    })
    .expect("extracted");

    assert_eq!(extract.row_count, u64::from(rows));
    assert_eq!(extract.columns, ["id", "code"]);
    assert_eq!(extract.sample_rows, [["#", "A-#"], ["#", "A-#"]]);
    assert!(reports.len() >= 2, "progress was reported: {reports:?}");
    assert!(reports.iter().all(|p| p.done <= p.total), "{reports:?}");
    assert!(
        reports.windows(2).all(|w| w[0].done <= w[1].done),
        "progress never goes back: {reports:?}"
    );
    let last = reports.last().expect("a report");
    assert_eq!(last.done, last.total);
}

#[test]
fn xls_ods_and_xlsb_fixtures_give_the_same_extract() {
    for name in ["people.xls", "people.ods", "people.xlsb"] {
        let extract = extract(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(extract.kind, FileKind::Excel, "{name}");
        assert_eq!(
            extract.sheets.as_deref(),
            Some(&[expected_people(), expected_codes()][..]),
            "{name}"
        );
        assert_eq!(extract.row_count, 3, "{name}");
        assert_eq!(extract.columns, expected_people().columns, "{name}");
        assert_no_raw_value(&extract);
    }
}

#[test]
fn an_encrypted_workbook_says_so() {
    let err = extract(&fixture("encrypted.xlsx")).expect_err("encrypted");
    assert!(
        matches!(
            err,
            ExtractError::Encrypted {
                what: "workbook",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().ends_with(
        "encrypted.xlsx: the workbook is password-protected or encrypted; remove the protection and try again"
    ));
}

/// Deterministic pseudo-random bytes.
fn noise(len: usize) -> Vec<u8> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

fn write_file(path: &Path, bytes: &[u8]) {
    let mut f = std::fs::File::create(path).expect("created");
    f.write_all(bytes).expect("written");
}

#[test]
fn random_bytes_named_xlsx_are_refused_with_a_clear_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("random.xlsx");
    write_file(&path, &noise(4096));
    let err = extract(&path).expect_err("not a workbook");
    assert!(matches!(err, ExtractError::Unsupported { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("random.xlsx: unsupported file type (unrecognised binary data, although the name ends in .xlsx)"),
        "{err}"
    );

    // With a zip signature in front, the Excel extractor itself reports it.
    let mut bytes = b"PK\x03\x04".to_vec();
    bytes.extend(noise(4096));
    write_file(&path, &bytes);
    let err = extract(&path).expect_err("not a workbook");
    assert!(matches!(err, ExtractError::Damaged { .. }), "{err:?}");
    assert!(
        err.to_string().ends_with(
            "random.xlsx: the workbook is damaged: its zip container is truncated or invalid"
        ),
        "{err}"
    );

    // Handed straight to the extractor, bytes that are no container at all.
    write_file(&path, &noise(4096));
    let input = Input {
        path: &path,
        display: "random.xlsx",
        filename: "random.xlsx",
        mime: sniff::XLSX,
        size: 4096,
    };
    let err = ExcelExtractor
        .extract(&input, &ExtractOptions::default(), &mut |_| {})
        .expect_err("not a workbook");
    assert_eq!(
        err.to_string(),
        "random.xlsx: the workbook is damaged: it is neither a zip container nor an Excel 97-2003 file"
    );
}

#[test]
fn a_truncated_xlsx_is_damaged() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("cut.xlsx");
    write_xlsx(&path);
    let bytes = std::fs::read(&path).expect("read");
    write_file(&path, &bytes[..bytes.len() / 2]);
    let err = extract(&path).expect_err("truncated");
    assert!(matches!(err, ExtractError::Damaged { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.ends_with(
            "cut.xlsx: the workbook is damaged: its zip container is truncated or invalid"
        ),
        "{message}"
    );
    assert!(!message.contains('\n'));
}

/// Rewrites the declared uncompressed size of the central-directory entry
/// named `member` (the cheap way to make a zip-bomb-like workbook).
fn declare_size(zip: &mut [u8], member: &str, size: u32) {
    let mut at = 0;
    while let Some(i) = zip[at..]
        .windows(4)
        .position(|w| w == b"PK\x01\x02")
        .map(|i| i + at)
    {
        let name_len = u16::from_le_bytes([zip[i + 28], zip[i + 29]]) as usize;
        if &zip[i + 46..i + 46 + name_len] == member.as_bytes() {
            zip[i + 24..i + 28].copy_from_slice(&size.to_le_bytes());
            return;
        }
        at = i + 4;
    }
    panic!("no central-directory entry {member}");
}

#[test]
fn a_zip_bomb_is_refused_before_it_is_opened() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("bomb.xlsx");
    write_xlsx(&path);
    let original = std::fs::read(&path).expect("read");

    // A sheet that claims 600 MiB from a few hundred bytes: the ratio gives it away.
    let mut bytes = original.clone();
    declare_size(&mut bytes, "xl/worksheets/sheet2.xml", 600 << 20);
    write_file(&path, &bytes);
    let err = extract(&path).expect_err("a bomb");
    assert!(
        matches!(
            err,
            ExtractError::TooLarge {
                what: "workbook",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("one part of 600.0 MiB is compressed"),
        "{err}"
    );
    assert!(err.to_string().contains("the limit is 1000:1"), "{err}");

    // A sheet that claims more than the per-part limit.
    let mut bytes = original;
    declare_size(&mut bytes, "xl/worksheets/sheet2.xml", u32::MAX);
    write_file(&path, &bytes);
    let err = extract(&path).expect_err("a bomb");
    assert!(matches!(err, ExtractError::TooLarge { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("one part declares 4.0 GiB, the limit for a part is 1.0 GiB"),
        "{err}"
    );
    assert!(err.to_string().ends_with("it may be a zip bomb"), "{err}");
}

#[test]
fn samples_follow_the_option() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("people.xlsx");
    write_xlsx(&path);
    let extract =
        extract_path(&path, &ExtractOptions::with_samples(1), &mut |_| {}).expect("extracted");
    assert_eq!(extract.sample_rows.len(), 1);
    assert_eq!(extract.row_count, 3);
    let sheets = extract.sheets.expect("sheets");
    assert_eq!(sheets[2].sample_rows.len(), 1);
    assert_eq!(sheets[2].row_count, 2);
}

/// Issue 39, finding 5: a workbook whose sheet list names one part 1,001
/// times (the attack declared 10^6 and ran past 300 s) is refused before
/// the spreadsheet library reads the list, saying why.
#[test]
fn a_workbook_declaring_too_many_sheets_is_refused_first() {
    use std::io::Read;
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("many.xlsx");
    write_xlsx(&path);
    let mut archive = zip::ZipArchive::new(std::fs::File::open(&path).expect("open")).expect("zip");
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    for i in 0..archive.len() {
        let mut member = archive.by_index(i).expect("member");
        let name = member.name().expect("a member name").into_owned();
        let mut text = Vec::new();
        member.read_to_end(&mut text).expect("read member");
        if name == "xl/workbook.xml" {
            let xml = String::from_utf8(text).expect("utf-8");
            let start = xml.find("<sheet ").expect("a sheet element");
            let end = start + xml[start..].find("/>").expect("its end") + 2;
            let one = &xml[start..end];
            let many: String = (0..1001)
                .map(|n| one.replacen("name=\"", &format!("name=\"S{n}"), 1))
                .collect();
            text = format!("{}{many}{}", &xml[..start], &xml[end..]).into_bytes();
        }
        out.start_file(name, opts).expect("start");
        out.write_all(&text).expect("write");
    }
    let bytes = out.finish().expect("finish").into_inner();
    write_file(&path, &bytes);
    let err = extract(&path).expect_err("too many sheets");
    assert!(err.to_string().contains("more than 1000 sheets"), "{err}");
}

/// Issue 39, finding 7: a damaged sheet's error came back with the sheet's
/// name, before anyone approved the file, and a sheet may be named after a
/// person. The error names the worksheet by its place.
#[test]
fn a_damaged_sheet_is_named_by_its_place_not_its_name() {
    use std::io::Read;
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("staff.xlsx");
    let mut book = rust_xlsxwriter::Workbook::new();
    for name in ["Summary", "Ophelia Hartmann"] {
        let sheet = book.add_worksheet().set_name(name).expect("sheet name");
        sheet.write(0, 0, "hours").expect("cell");
        sheet.write(1, 0, 38).expect("cell");
    }
    book.save(&path).expect("saved");
    let mut archive = zip::ZipArchive::new(std::fs::File::open(&path).expect("open")).expect("zip");
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for i in 0..archive.len() {
        let mut member = archive.by_index(i).expect("member");
        let name = member.name().expect("a member name").into_owned();
        let mut text = Vec::new();
        member.read_to_end(&mut text).expect("read member");
        if name == "xl/worksheets/sheet2.xml" {
            // Cut mid-element: the sheet's XML is broken.
            text.truncate(text.len() / 2);
        }
        out.start_file(name, zip::write::SimpleFileOptions::default())
            .expect("start");
        out.write_all(&text).expect("write");
    }
    write_file(&path, &out.finish().expect("finish").into_inner());
    let err = extract(&path).expect_err("a damaged sheet");
    let message = err.to_string();
    assert!(message.contains("worksheet 2"), "{message}");
    for raw in ["Ophelia", "Hartmann"] {
        assert!(!message.contains(raw), "{message}");
    }
}
