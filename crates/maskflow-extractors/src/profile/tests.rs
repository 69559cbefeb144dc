use super::classify::{Kind, classify, round2};
use super::*;
use crate::values::CollectedValues;

const FIRST: [&str; 8] = [
    "Ottoline",
    "Bartholomew",
    "Ximena",
    "Leopold",
    "Marguerite",
    "Zebulon",
    "Henrietta",
    "Cuthbert",
];
const LAST: [&str; 5] = [
    "Okonkwo",
    "Van der Berg",
    "Fairweather",
    "Lindqvist",
    "Moreau",
];

/// A realistic customer file: an id, names, prose notes, dates in two
/// layouts, amounts in two currencies, `N/A` placeholders, blanks and
/// two duplicated rows.
fn customers() -> String {
    let mut s = String::from("customer_id,name,joined,amount,status,notes\n");
    for i in 0..240u32 {
        let name = format!("{} {}", FIRST[(i % 8) as usize], LAST[(i % 5) as usize]);
        // One date in ten written day first with slashes.
        let (d, m) = (i % 28 + 1, i % 12 + 1);
        let joined = if i % 10 == 3 {
            format!("{d:02}/{m:02}/2023")
        } else {
            format!("2023-{m:02}-{d:02}")
        };
        let amount = if i % 6 == 5 {
            format!("€{},{:02}", 10 + i, i % 100)
        } else {
            format!("${},{:03}.{:02}", 1 + i % 9, i * 7 % 1000, i % 100)
        };
        let status = ["active", "lapsed", "N/A", "active"][(i % 4) as usize];
        let notes = if i % 7 == 0 {
            String::new()
        } else {
            format!(
                "\"Called on {d} March about the {} order, left a message\"",
                m * 3
            )
        };
        s.push_str(&format!(
            "C-{:05},{name},{joined},\"{amount}\",{status},{notes}\n",
            10_000 + i * 37
        ));
    }
    // Two rows repeated exactly.
    let lines: Vec<String> = s.lines().skip(1).take(2).map(str::to_owned).collect();
    for l in lines {
        s.push_str(&l);
        s.push('\n');
    }
    s
}

fn profile_file(name: &str, bytes: &[u8]) -> (Vec<ProfiledTable>, FileExtract) {
    let dir = tempfile::tempdir().expect("tmp");
    let p = dir.path().join(name);
    std::fs::write(&p, bytes).expect("write");
    let registry = Registry::with_defaults();
    let tables = profile_path(&registry, &p, &ValueOptions::default()).expect("profile");
    let mut extract = registry
        .extract(&p, &crate::ExtractOptions::default(), &mut |_| {})
        .expect("extract");
    attach(&mut extract, tables.clone());
    (tables, extract)
}

fn column<'a>(p: &'a TableProfile, name: &str) -> &'a ColumnProfile {
    p.columns
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no column {name}"))
}

#[test]
fn a_realistic_csv_is_profiled_over_every_row() {
    let (tables, extract) = profile_file("customers.csv", customers().as_bytes());
    assert_eq!(tables.len(), 1);
    let p = extract.profile.as_ref().expect("profile attached");
    assert_eq!(p.rows_profiled, 242);
    assert_eq!(p.duplicate_rows, 2);
    // The id repeats in the duplicated rows, so no column is a key here…
    assert!(p.unique_columns.is_empty(), "{:?}", p.unique_columns);

    let id = column(p, "customer_id");
    assert_eq!(id.inferred_type, "text");
    assert_eq!(id.distinct, 240);
    assert_eq!(
        id.shapes,
        [ShapeCount {
            shape: "A-#####".into(),
            count: 242
        }]
    );

    let name = column(p, "name");
    assert_eq!(name.distinct, 40);
    assert!(
        name.shapes.iter().any(|s| s.shape == "Aaaaaaaa Aaaaaaa"),
        "{:?}",
        name.shapes
    );

    let joined = column(p, "joined");
    assert_eq!(joined.inferred_type, "date");
    assert_eq!(joined.date_format.as_deref(), Some("%Y-%m-%d"));
    let minority = joined
        .shapes
        .iter()
        .find(|s| s.shape == "##/##/####")
        .expect("minority shape");
    assert_eq!(minority.count, 24);

    let amount = column(p, "amount");
    assert_eq!(amount.inferred_type, "decimal");
    assert!(
        amount.shapes.iter().any(|s| s.shape == "$#,###.##"),
        "{:?}",
        amount.shapes
    );
    assert!(
        amount.shapes.iter().any(|s| s.shape == "€###,##"),
        "{:?}",
        amount.shapes
    );
    // The smallest is a euro amount (€15,05), the largest a dollar one.
    assert_eq!(amount.min.as_deref(), Some("15"));
    assert!(
        amount.max.as_deref().is_some_and(|m| m.ends_with("e3")),
        "{:?}",
        amount.max
    );

    let status = column(p, "status");
    assert_eq!(status.placeholders, 60);
    assert_eq!(status.distinct, 2);
    assert_eq!(status.inferred_type, "text");

    let notes = column(p, "notes");
    assert_eq!(notes.nulls, 36);
    assert!(notes.min_length.is_some() && notes.max_length >= notes.min_length);
}

#[test]
fn an_id_column_of_a_table_without_repeats_is_a_unique_key() {
    let mut s = String::from("id,region,score\n");
    for i in 0..500 {
        s.push_str(&format!(
            "{},{},{}\n",
            7000 + i,
            ["north", "south"][i % 2],
            i % 13
        ));
    }
    let (_, extract) = profile_file("scores.csv", s.as_bytes());
    let p = extract.profile.expect("profile");
    assert_eq!(p.unique_columns, ["id"]);
    assert_eq!(p.duplicate_rows, 0);
    let id = column(&p, "id");
    assert_eq!(id.inferred_type, "integer");
    assert_eq!(
        (id.min.as_deref(), id.max.as_deref()),
        (Some("7e3"), Some("7.5e3"))
    );
    assert_eq!(column(&p, "score").distinct, 13);
}

#[test]
fn nothing_in_the_profile_is_a_raw_value_of_four_characters_or_more() {
    let text = customers();
    let (_, extract) = profile_file("customers.csv", text.as_bytes());
    let json = serde_json::to_string(&extract.profile).expect("json");
    let mut raw = CollectedValues::default();
    let dir = tempfile::tempdir().expect("tmp");
    let p = dir.path().join("c.csv");
    std::fs::write(&p, &text).expect("write");
    Registry::with_defaults()
        .values(&p, &ValueOptions::default(), &mut raw)
        .expect("values");
    for v in raw.cell_values() {
        for token in std::iter::once(v).chain(v.split([' ', ',', '"'])) {
            if token.chars().count() >= 4 && !super::classify::is_placeholder(token) {
                assert!(!json.contains(token), "{token:?} is in the profile: {json}");
            }
        }
    }
}

#[test]
fn every_sheet_of_a_workbook_gets_its_profile_and_displayed_forms_are_not_columns() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("book.xlsx");
    let mut wb = rust_xlsxwriter::Workbook::new();
    let s = wb.add_worksheet().set_name("Staff").expect("name");
    s.write(0, 0, "name").expect("w");
    s.write(0, 1, "salary").expect("w");
    for r in 1..=30u32 {
        s.write(
            r,
            0,
            format!("{} {}", FIRST[(r % 8) as usize], LAST[(r % 5) as usize]),
        )
        .expect("w");
        s.write(r, 1, 41000.5 + f64::from(r) * 1000.0).expect("w");
    }
    let s2 = wb.add_worksheet().set_name("Codes").expect("name");
    s2.write(0, 0, "code").expect("w");
    for r in 1..=12u32 {
        s2.write(r, 0, f64::from(100 + r % 3)).expect("w");
    }
    wb.save(&path).expect("save");
    let registry = Registry::with_defaults();
    let tables = profile_path(&registry, &path, &ValueOptions::default()).expect("profile");
    let mut extract = registry
        .extract(&path, &crate::ExtractOptions::default(), &mut |_| {})
        .expect("extract");
    attach(&mut extract, tables);
    let sheets = extract.sheets.as_ref().expect("sheets");
    let staff = sheets[0].profile.as_ref().expect("staff profile");
    assert_eq!(staff.columns.len(), 2, "{staff:?}");
    assert_eq!(staff.rows_profiled, 30);
    assert_eq!(column(staff, "salary").inferred_type, "decimal");
    assert_eq!(column(staff, "salary").max.as_deref(), Some("7.1e4"));
    let codes = sheets[1].profile.as_ref().expect("codes profile");
    assert_eq!(column(codes, "code").distinct, 3);
    assert_eq!(extract.profile.as_ref(), Some(staff));
}

#[test]
fn an_extract_without_a_profile_still_loads() {
    let old = r##"{"filename":"a.csv","columns":["x"],"sample_rows":[["#"]],"row_count":1,
        "sheets":[{"name":"S","columns":["x"],"sample_rows":[],"row_count":0}]}"##;
    let e: FileExtract = serde_json::from_str(old).expect("old extract");
    assert!(e.profile.is_none());
    assert!(e.sheets.expect("sheets")[0].profile.is_none());
}

#[test]
fn values_are_classified_by_their_layout() {
    assert_eq!(
        classify("2024-01-31").0,
        Kind::Date(super::classify::DateLayout::YearFirst(b'-'))
    );
    assert!(matches!(classify("31/01/2024").0, Kind::Date(_)));
    assert!(matches!(
        classify("2024-01-31T10:20:30Z").0,
        Kind::DateTime(..)
    ));
    assert!(matches!(classify("2024-01-31 10:20").0, Kind::DateTime(..)));
    assert_eq!(classify("02:05:06").0, Kind::Time);
    assert_eq!(classify("$1,234.56"), (Kind::Decimal, Some(1234.56)));
    assert_eq!(classify("€12,50"), (Kind::Decimal, Some(12.5)));
    assert_eq!(classify("(1,200)"), (Kind::Integer, Some(-1200.0)));
    assert_eq!(classify("-3.5%"), (Kind::Decimal, Some(-3.5)));
    assert_eq!(classify("1.5e3"), (Kind::Decimal, Some(1500.0)));
    assert_eq!(classify("TRUE").0, Kind::Boolean);
    assert_eq!(classify("13/13/2024").0, Kind::Text);
    assert_eq!(classify("1,23,4").0, Kind::Text);
    assert_eq!(classify("Biscoe").0, Kind::Text);
    assert_eq!(classify("12 kg").0, Kind::Text);
}

#[test]
fn ranges_round_to_two_figures_and_cannot_spell_a_long_value() {
    for (x, want) in [
        (0.0, "0"),
        (7.0, "7"),
        (12.0, "12"),
        (-12.0, "-12"),
        (123.0, "120"),
        (1234.56, "1.2e3"),
        (-1234.0, "-1.2e3"),
        (0.5, "5e-1"),
        (0.25, "2.5e-1"),
        (0.0034, "3.4e-3"),
        (99.6, "100"),
        (996.0, "1e3"),
        (1.25, "1.3e0"),
        (41000.5, "4.1e4"),
    ] {
        assert_eq!(round2(x), want, "{x}");
        let r = round2(x);
        assert!((r.len() <= 3 && !r.contains('.')) || r.contains('e'), "{x}");
    }
}

fn formats(c: &ColumnProfile) -> Vec<(&str, u64)> {
    c.formats
        .iter()
        .map(|f| (f.format.as_str(), f.count))
        .collect()
}

/// Issue #40 point 1: a nightly rate of dot-decimal dollars with a
/// minority of decimal-comma euros, a date column with month-first dates
/// and Excel serials among ISO dates, and a text column with padding.
fn rates() -> String {
    let mut s = String::from("stay,night,rate,code\n");
    for i in 0..200u32 {
        let night = match i % 10 {
            3 => format!("{:02}/{:02}/2024", i % 12 + 1, 13 + i % 15),
            7 if i % 20 == 7 => format!("{}", 45_000 + i),
            8 => "not yet".to_owned(),
            _ => format!("2024-{:02}-{:02}", i % 12 + 1, i % 28 + 1),
        };
        let rate = match i % 8 {
            2 => format!("\"{},{:02} €\"", 80 + i, i % 100),
            5 => format!("\"$1,{:03}.50\"", i),
            6 => format!("({}.25)", i + 1),
            _ => format!("{}.{:02}", 90 + i, i % 100),
        };
        let code = if i % 25 == 0 {
            format!(" ab{i} ")
        } else {
            format!("AB{i}")
        };
        s.push_str(&format!("S{i:04},{night},{rate},{code}\n"));
    }
    s
}

#[test]
fn every_date_and_number_format_is_counted_minorities_included() {
    let (_, extract) = profile_file("rates.csv", rates().as_bytes());
    let p = extract.profile.as_ref().expect("profile");
    let night = column(p, "night");
    assert_eq!(night.inferred_type, "date", "{night:?}");
    assert_eq!(
        formats(night),
        [
            ("%Y-%m-%d", 150),
            ("%m/%d/%Y", 20),
            ("not a date", 20),
            ("Excel serial", 10)
        ]
    );
    let rate = column(p, "rate");
    assert_eq!(rate.inferred_type, "decimal");
    assert_eq!(
        formats(rate),
        [
            ("decimal point", 125),
            ("decimal comma, € after", 25),
            ("decimal point, negative in parentheses", 25),
            ("decimal point, thousands comma, $ before", 25),
        ]
    );
    assert_eq!(rate.range_values, Some(200));
    let code = column(p, "code");
    assert_eq!(
        formats(code),
        [
            ("text, upper case", 192),
            ("text, lower case, spaces around", 8)
        ]
    );
}

/// Each value read as the number `n` in the format `f` (`""`: no number).
fn numbers_read(cases: &[(&str, f64, &str)]) {
    for &(v, n, f) in cases {
        let (_, value, format) = super::classify::classify_full(v);
        if f.is_empty() {
            assert_eq!(value, None, "{v}");
            continue;
        }
        assert_eq!(value, Some(n), "{v}");
        assert_eq!(format.map(|f| f.describe()).as_deref(), Some(f), "{v}");
    }
}

#[test]
fn numbers_are_read_in_every_common_format() {
    numbers_read(&[
        ("1.234,56", 1234.56, "decimal comma, thousands point"),
        ("1.234.567", 1_234_567.0, "whole number, thousands point"),
        ("12%", 12.0, "whole number, percent"),
        ("1.5e3", 1500.0, "scientific"),
        ("£(3)", 0.0, ""),
    ]);
}

/// A walk as the builder: `EUR 117.73` and `117.73 EUR` were "text, upper
/// case" and `14 Oct 2026` "text, mixed case", so the prompt said a quarter
/// of the amounts and dates were text.
#[test]
fn amounts_with_a_currency_code_and_dates_with_a_month_name_are_read() {
    numbers_read(&[
        ("EUR 117.73", 117.73, "decimal point, EUR before"),
        ("117.73 EUR", 117.73, "decimal point, EUR after"),
        (
            "USD1,234.00",
            1234.0,
            "decimal point, thousands comma, USD before",
        ),
        (
            "1.234,50 CHF",
            1234.5,
            "decimal comma, thousands point, CHF after",
        ),
        ("-GBP 12", -12.0, "whole number, GBP before"),
        ("€755,01", 755.01, "decimal comma, € before"),
        // Words that end or start like a code are not amounts.
        ("TEUR 12", 0.0, ""),
        ("12 EURO", 0.0, ""),
        ("NEUR", 0.0, ""),
    ]);
    let mut s = String::from("when,amount\n");
    let dates = [
        "14 Oct 2026",
        "4-Oct-2026",
        "\"Oct 14, 2026\"",
        "October 4 2026",
        "2026-10-14",
    ];
    for i in 0..100 {
        s.push_str(&format!("{},EUR {}.50\n", dates[i % 5], 10 + i));
    }
    let (_, extract) = profile_file("claims.csv", s.as_bytes());
    let p = extract.profile.as_ref().expect("profile");
    let when = column(p, "when");
    assert_eq!(when.inferred_type, "date", "{when:?}");
    let mut told = formats(when);
    told.sort_unstable();
    assert_eq!(
        told,
        [
            ("%B %d %Y", 20),
            ("%Y-%m-%d", 20),
            ("%b %d, %Y", 20),
            ("%d %b %Y", 20),
            ("%d-%b-%Y", 20),
        ]
    );
    let amount = column(p, "amount");
    assert_eq!(amount.inferred_type, "decimal", "{amount:?}");
    assert_eq!(formats(amount), [("decimal point, EUR before", 100)]);
    // Not dates: a name with a number, a month word in prose.
    for v in [
        "May 2026",
        "Flat 12 May",
        "March 14 2026 at noon",
        "Maybe 12 2026",
    ] {
        assert!(
            !matches!(super::classify::classify(v).0, Kind::Date(_)),
            "{v}"
        );
    }
}

#[test]
fn placeholders_are_named_and_a_list_s_own_unknown_is_a_value() {
    // An operator list, each name once, one of them `UNKNOWN`; a status
    // column whose `N/A` and `unknown` mean missing; a tier in upper case
    // with a `NONE` among its categories.
    let mut s = String::from("operator,status,tier\n");
    for i in 0..60u32 {
        let operator = if i == 17 {
            "UNKNOWN".to_owned()
        } else {
            format!(
                "OPERATOR {}",
                ["ALPHA", "BRAVO", "CHARLIE"][(i % 3) as usize]
            ) + &format!(" {i}")
        };
        let status = match i % 10 {
            0 | 5 => "N/A",
            9 => "unknown",
            _ => ["open", "closed"][(i % 2) as usize],
        };
        let tier = ["GOLD", "SILVER", "NONE"][(i % 3) as usize];
        s.push_str(&format!("{operator},{status},{tier}\n"));
    }
    let (_, extract) = profile_file("operators.csv", s.as_bytes());
    let p = extract.profile.as_ref().expect("profile");
    let operator = column(p, "operator");
    assert_eq!(operator.placeholders, 0, "{operator:?}");
    assert_eq!(operator.distinct, 60);
    assert_eq!(operator.category_words[0].format, "unknown");
    assert!(p.unique_columns.contains(&"operator".to_owned()), "{p:?}");
    let status = column(p, "status");
    assert_eq!(status.placeholders, 18);
    let words: Vec<(&str, u64)> = status
        .placeholder_words
        .iter()
        .map(|w| (w.format.as_str(), w.count))
        .collect();
    assert_eq!(words, [("n/a", 12), ("unknown", 6)]);
    // A category `NONE` is named, so the reader can tell it is one.
    let tier = column(p, "tier");
    assert_eq!(tier.placeholders, 20, "{tier:?}");
    assert_eq!(tier.placeholder_words[0].format, "none");
}

/// A sheet as analysts export it (#40 point 2): a title, a note with the
/// scale, an empty row, then the header and the table.
pub(crate) fn titled_book() -> Vec<u8> {
    let mut wb = rust_xlsxwriter::Workbook::new();
    let s = wb.add_worksheet().set_name("Exports").expect("name");
    s.write(0, 0, "Coffee exports by port, 2023").expect("w");
    s.write(1, 0, "Values in USD per tonne; volumes ($'000)")
        .expect("w");
    for (c, h) in ["port", "month", "volume ($'000)", "price"]
        .iter()
        .enumerate()
    {
        s.write(3, c as u16, *h).expect("w");
    }
    for r in 0..40u32 {
        s.write(
            4 + r,
            0,
            ["Santos", "Veracruz", "Mombasa"][(r % 3) as usize],
        )
        .expect("w");
        s.write(4 + r, 1, format!("2023-{:02}", r % 12 + 1))
            .expect("w");
        s.write(4 + r, 2, f64::from(100 + r * 7)).expect("w");
        s.write(4 + r, 3, 2000.5 + f64::from(r)).expect("w");
    }
    wb.save_to_buffer().expect("xlsx")
}

#[test]
fn a_title_block_above_the_header_is_found_and_its_units_named() {
    let (_, extract) = profile_file("exports.xlsx", &titled_book());
    assert_eq!(
        extract.columns,
        ["port", "month", "volume ($'000)", "price"]
    );
    assert_eq!(extract.header_row, Some(4));
    assert_eq!(extract.row_count, 40);
    assert_eq!(extract.rows_above.len(), 3, "{:?}", extract.rows_above);
    assert!(
        !extract
            .rows_above
            .concat()
            .iter()
            .any(|c| c.contains("Coffee"))
    );
    assert_eq!(extract.units, ["in thousands", "USD", "per tonne", "$"]);
    let p = extract.profile.as_ref().expect("profile");
    assert_eq!(p.rows_profiled, 40);
    assert_eq!(column(p, "price").inferred_type, "decimal");
}

#[test]
fn repeated_ids_are_explained_column_by_column() {
    // 100 orders; 3 written twice exactly, 4 again with the status in upper
    // case and the amount grouped, 5 again with another amount.
    let mut s = String::from("order_id,status,amount\n");
    let row = |i: u32| format!("{},shipped,{}.50\n", 700_000 + i, 1000 + i);
    for i in 0..100 {
        s.push_str(&row(i));
    }
    for i in 0..3 {
        s.push_str(&row(i));
    }
    for i in 10..14 {
        s.push_str(&format!(
            "{},SHIPPED,\"{},{:03}.50\"\n",
            700_000 + i,
            (1000 + i) / 1000,
            (1000 + i) % 1000
        ));
    }
    for i in 20..25 {
        s.push_str(&format!("{},shipped,{}.00\n", 700_000 + i, 5 + i));
    }
    let (_, extract) = profile_file("orders.csv", s.as_bytes());
    let p = extract.profile.as_ref().expect("profile");
    assert_eq!(p.duplicate_rows, 3);
    let k = p.repeated_keys.as_ref().expect("repeated ids");
    assert_eq!(k.column, "order_id");
    assert_eq!((k.rows, k.exact, k.same_after_normalising), (12, 3, 4));
    let differing: Vec<(&str, u64, u64)> = k
        .differing
        .iter()
        .map(|d| (d.column.as_str(), d.rows, d.only_format))
        .collect();
    assert_eq!(differing, [("status", 4, 4), ("amount", 9, 4)]);
}
