//! Writes the Excel benchmark workbook: `make_bench_xlsx OUT.xlsx [ROWS]`
//! (default 200,000 data rows of 10 mixed columns, a header row, shared
//! strings as Excel writes them). Used by `bench/excel/run.sh`.

use std::process::ExitCode;

use rust_xlsxwriter::{ExcelDateTime, Format, Workbook, XlsxError};

const CITIES: [&str; 8] = [
    "Paris", "London", "Zürich", "Berlin", "Madrid", "Roma", "Oslo", "Lisboa",
];
const NAMES: [&str; 6] = ["John", "Jane", "Émile", "Zoë", "Ana", "Li"];

fn write(path: &str, rows: u32) -> Result<(), XlsxError> {
    let mut book = Workbook::new();
    let date = Format::new().set_num_format("yyyy-mm-dd");
    let sheet = book.add_worksheet();
    sheet.set_name("Orders")?;
    sheet.write_row(
        0,
        0,
        [
            "order_id",
            "customer",
            "email",
            "city",
            "ordered_on",
            "amount",
            "quantity",
            "paid",
            "product",
            "note",
        ],
    )?;
    let start = ExcelDateTime::from_ymd(2020, 1, 1)?.to_excel();
    for r in 1..=rows {
        let i = r as usize;
        let name = NAMES[i % NAMES.len()];
        sheet.write_number(r, 0, f64::from(r))?;
        sheet.write_string(r, 1, format!("{name} Smith{}", i % 1000))?;
        sheet.write_string(r, 2, format!("{}{}@example.com", name.to_lowercase(), i))?;
        sheet.write_string(r, 3, CITIES[i % CITIES.len()])?;
        sheet.write_number_with_format(r, 4, start + (i % 1500) as f64, &date)?;
        sheet.write_number(r, 5, (i % 10_000) as f64 * 1.25)?;
        sheet.write_number(r, 6, (i % 17) as f64)?;
        sheet.write_boolean(r, 7, i.is_multiple_of(3))?;
        sheet.write_string(r, 8, format!("PROD-{:06}", i % 5000))?;
        sheet.write_string(r, 9, format!("Deliver before noon, gate {}", i % 9))?;
    }
    book.save(path)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: make_bench_xlsx OUT.xlsx [ROWS]");
        return ExitCode::FAILURE;
    };
    let rows = match args.next().map(|r| r.parse::<u32>()) {
        None => 200_000,
        Some(Ok(r)) => r,
        Some(Err(e)) => {
            eprintln!("error: ROWS: {e}");
            return ExitCode::FAILURE;
        }
    };
    match write(&path, rows) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {path}: {e}");
            ExitCode::FAILURE
        }
    }
}
