//! Tables in PDFs (seed 000), over fixtures written by two real table writers
//! (fpdf2's `table()` and reportlab's `Table`: see
//! tests/fixtures/docs/make_table_fixtures.py), a prose-only page and a
//! scanned page without a text layer.

use std::path::{Path, PathBuf};

use maskflow_extractors::Registry;
use maskflow_extractors::extract::{DocumentExtract, FileExtract};
use maskflow_extractors::limits::ExtractOptions;
use maskflow_extractors::values::{CollectedValues, ValueOptions};

/// Cell values of the fixtures' tables; none may appear in an extract.
const CELLS: &[&str] = &[
    "Ophelia Hartmann",
    "Wilhelmina",
    "Leopold",
    "Mbeki",
    "Achterberg",
    "Oyelaran",
    "Thistlewood",
    "Bartholomew",
    "Zacharias",
    "Isadora",
    "2024-",
    "1,234.56",
    "12,904.00",
    "Zanzibar",
    "Marmalade",
    "18,026.40",
];

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/docs")
        .join(name)
}

fn extract(name: &str) -> FileExtract {
    Registry::with_defaults()
        .extract(&fixture(name), &ExtractOptions::default(), &mut |_| {})
        .unwrap_or_else(|e| panic!("{name} reads: {e}"))
}

fn document(extract: &FileExtract) -> &DocumentExtract {
    extract.document.as_ref().expect("document metadata")
}

/// Both writers' PDFs hold the same two tables: invoices (4 columns, a
/// header and 6 rows) and regions (2 columns, a header and 3 rows).
fn assert_two_tables(name: &str) {
    let extract = extract(name);
    let tables = &document(&extract).tables;
    assert_eq!(tables.len(), 2, "{name}: {tables:#?}");
    let shape: Vec<(usize, u64)> = tables
        .iter()
        .map(|t| (t.columns.len(), t.row_count))
        .collect();
    assert_eq!(shape, [(4, 6), (2, 3)], "{name}: {tables:#?}");
    assert_eq!(
        tables[0].columns,
        ["Customer", "Invoice date", "Amount", "Handled by"],
        "{name}"
    );
    assert_eq!(tables[1].columns, ["Region", "Total"], "{name}");
    // Samples are masked with their shape kept, row by row.
    assert_eq!(
        tables[0].sample_rows[0],
        [
            "Aaaaaaa Aaaaaaaa",
            "####-##-##",
            "#,###.##",
            "Aaaaaaaaaaa Aaaaaa"
        ],
        "{name}"
    );
    assert_eq!(
        tables[1].sample_rows[2],
        ["Aaaaaaa Aaaaaaa", "#,###.##"],
        "{name}"
    );
    let json = serde_json::to_string(&extract).expect("serializes");
    for cell in CELLS {
        assert!(!json.contains(cell), "{name}: {cell:?} leaked into {json}");
    }
}

#[test]
fn fpdf2_tables_extract_with_their_row_and_column_counts() {
    assert_two_tables("tables-fpdf2.pdf");
}

#[test]
fn reportlab_tables_extract_with_their_row_and_column_counts() {
    assert_two_tables("tables-reportlab.pdf");
}

#[test]
fn the_guard_knows_every_cell_as_a_value() {
    let mut values = CollectedValues::default();
    Registry::with_defaults()
        .values(
            &fixture("tables-reportlab.pdf"),
            &ValueOptions::default(),
            &mut values,
        )
        .expect("values read");
    let cells = values.cell_values();
    for expected in [
        "Ophelia Hartmann",
        "2024-03-30",
        "12,904.00",
        "Quixote Heights",
        "7,745.12",
    ] {
        assert!(
            cells.contains(&expected),
            "{expected:?} not among {cells:?}"
        );
    }
    assert_eq!(values.tables.len(), 2);
    assert_eq!(values.tables[1].columns, ["Region", "Total"]);
}

#[test]
fn prose_is_no_table() {
    let extract = extract("prose.pdf");
    assert!(
        document(&extract).tables.is_empty(),
        "{:#?}",
        document(&extract).tables
    );
    assert!(!document(&extract).text_preview.is_empty());
}

#[test]
fn a_scanned_table_says_there_is_no_text_layer() {
    let extract = extract("scanned-table.pdf");
    assert!(document(&extract).tables.is_empty());
    assert!(
        extract
            .warnings
            .iter()
            .any(|w| w.contains("scanned images")),
        "{:?}",
        extract.warnings
    );
}
