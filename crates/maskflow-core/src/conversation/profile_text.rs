//! The extracts' profiles as the builder's prompts show them: one short
//! line per column instead of the profile's JSON, and, across files, the
//! columns that look like join keys with whether their shapes agree.
//! Pure, and built only from the approved extracts: everything in a
//! profile is a count, a masked shape or a rounded range.

use serde_json::{Map, Value, json};

/// Shapes named per column in a prompt line.
const SHAPES_SHOWN: usize = 4;
/// Join-key pairs named at most.
const MAX_PAIRS: usize = 12;

/// `extracts` with every table's `profile` written compactly (see
/// [`column_line`]); a workbook's top level loses its copy of the first
/// sheet's profile (the sheet carries it).
pub fn compact(extracts: &Value) -> Value {
    match extracts {
        Value::Array(files) => Value::Array(files.iter().map(compact_file).collect()),
        other => other.clone(),
    }
}

fn compact_file(f: &Value) -> Value {
    let Some(obj) = f.as_object() else {
        return f.clone();
    };
    let mut out = obj.clone();
    if let Some(sheets) = obj.get("sheets").and_then(Value::as_array) {
        out.remove("profile");
        out.insert(
            "sheets".into(),
            Value::Array(sheets.iter().map(compact_table).collect()),
        );
        Value::Object(out)
    } else {
        compact_table(f)
    }
}

fn compact_table(t: &Value) -> Value {
    let Some(obj) = t.as_object() else {
        return t.clone();
    };
    let Some(p) = obj.get("profile").and_then(Value::as_object) else {
        return t.clone();
    };
    let mut out: Map<String, Value> = obj.clone();
    let columns: Vec<Value> = p
        .get("columns")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| Value::from(column_line(c)))
        .collect();
    let mut profile = json!({
        "rows": p.get("rows_profiled").cloned().unwrap_or(Value::Null),
        "duplicate_rows": p.get("duplicate_rows").cloned().unwrap_or(Value::Null),
        "unique_keys": p.get("unique_columns").cloned().unwrap_or_else(|| json!([])),
        "columns": columns,
    });
    if let Some(left) = p.get("columns_left_out") {
        profile["columns_left_out"] = left.clone();
    }
    if let Some(line) = p.get("repeated_keys").and_then(repeated_keys_line) {
        profile["repeated_ids"] = Value::from(line);
    }
    out.insert("profile".into(), profile);
    Value::Object(out)
}

/// The rows repeating an id in a line: `` `order_id`: 12 rows repeat an
/// earlier row's value — 3 exactly, 4 the same once case, spaces and number
/// format are normalised, 5 differ in content; the columns that differ:
/// `amount` (9 rows, 4 of them only in …)``.
fn repeated_keys_line(k: &Value) -> Option<String> {
    let column = k.get("column")?.as_str()?;
    let rows = count(k, "rows");
    let (exact, normal) = (count(k, "exact"), count(k, "same_after_normalising"));
    let other = rows.saturating_sub(exact + normal);
    let differing: Vec<String> = k
        .get("differing")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|d| {
            let c = d.get("column").and_then(Value::as_str).unwrap_or("");
            let (n, f) = (count(d, "rows"), count(d, "only_format"));
            if f > 0 {
                format!("`{c}` ({n} rows, {f} of them only in case, spaces or number format)")
            } else {
                format!("`{c}` ({n} rows)")
            }
        })
        .collect();
    let mut line = format!(
        "`{column}`: {rows} rows repeat an earlier row's value — {exact} exactly, \
{normal} the same once case, spaces and number format are normalised, {other} differ in content"
    );
    if !differing.is_empty() {
        line.push_str(&format!(
            "; the columns that differ: {}",
            differing.join(", ")
        ));
    }
    Some(line)
}

fn count(c: &Value, key: &str) -> u64 {
    c.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// One column of a profile in a line: `amount: decimal, 3 null, 2
/// placeholder (N/A…), 180 distinct, length 5 to 9, range ~15 to ~9.9e3,
/// shapes `$#,###.##` 200, `€###,##` 40, 2 other` (shapes in backticks, so
/// they need no escaping inside the extract's JSON).
pub fn column_line(c: &Value) -> String {
    let s = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("");
    let mut parts = vec![match c.get("date_format").and_then(Value::as_str) {
        Some(f) => format!("{} ({f})", s("inferred_type")),
        None => s("inferred_type").to_owned(),
    }];
    let nulls = count(c, "nulls");
    if nulls > 0 {
        parts.push(format!("{nulls} null"));
    }
    let placeholders = count(c, "placeholders");
    let words = word_counts(c, "placeholder_words");
    if placeholders > 0 && words.is_empty() {
        parts.push(format!("{placeholders} placeholder (N/A, -, null…)"));
    } else if placeholders > 0 {
        parts.push(format!("{placeholders} placeholder ({})", words.join(", ")));
    }
    let entries = word_counts(c, "category_words");
    if !entries.is_empty() {
        parts.push(format!(
            "entries that are placeholder words but values of this column, not missing ({})",
            entries.join(", ")
        ));
    }
    let capped = c.get("distinct_capped").and_then(Value::as_bool) == Some(true);
    parts.push(format!(
        "{}{} distinct",
        count(c, "distinct"),
        if capped { "+" } else { "" }
    ));
    if let (Some(lo), Some(hi)) = (
        c.get("min_length").and_then(Value::as_u64),
        c.get("max_length").and_then(Value::as_u64),
    ) {
        parts.push(if lo == hi {
            format!("length {lo}")
        } else {
            // Words between the numbers: `4–5` or `4..~5` reads to the
            // guard as the decimal 4.5, a value the file may hold.
            format!("length {lo} to {hi}")
        });
    }
    if let (Some(lo), Some(hi)) = (
        c.get("min").and_then(Value::as_str),
        c.get("max").and_then(Value::as_str),
    ) {
        parts.push(match c.get("range_values").and_then(Value::as_u64) {
            Some(n) => format!("range ~{lo} to ~{hi} over {n} numbers"),
            None => format!("range ~{lo} to ~{hi}"),
        });
    }
    if let Some(line) = formats_line(c) {
        parts.push(line);
    }
    let shapes: Vec<String> = c
        .get("shapes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .take(SHAPES_SHOWN)
        .map(|sh| {
            // The count first and a word between: a count right after a
            // shape (`A-#` 2) reads to the guard like an ID (`A-2`).
            format!(
                "{} rows `{}`",
                count(sh, "count"),
                sh.get("shape").and_then(Value::as_str).unwrap_or("")
            )
        })
        .collect();
    let shown: u64 = c
        .get("shapes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .take(SHAPES_SHOWN)
        .map(|sh| count(sh, "count"))
        .sum();
    let total: u64 = c
        .get("shapes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|sh| count(sh, "count"))
        .sum::<u64>()
        + count(c, "other_shapes");
    if !shapes.is_empty() {
        let mut line = format!("shapes {}", shapes.join(", "));
        if total > shown {
            line.push_str(&format!(", other shapes in {} rows", total - shown));
        }
        parts.push(line);
    }
    format!("{}: {}", s("name"), parts.join(", "))
}

/// Maskflow's words of a list (`placeholder_words`, `category_words`) with
/// their counts: `17 rows n/a`.
fn word_counts(c: &Value, key: &str) -> Vec<String> {
    c.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|w| {
            let n = count(w, "count");
            let rows = if n == 1 { "row" } else { "rows" };
            format!(
                "{n} {rows} `{}`",
                w.get("format").and_then(Value::as_str).unwrap_or("")
            )
        })
        .collect()
}

/// Text formats named per column; the rest of a free-text column's
/// formats are counted (no format of a date, number or key is left out).
const TEXT_FORMATS_SHOWN: usize = 4;

/// The column's formats (`formats 200 rows [decimal point, $ before], 40
/// rows [decimal comma, € before]`): every one but text case variants past
/// [`TEXT_FORMATS_SHOWN`]; none when the one format is what the type says.
fn formats_line(c: &Value) -> Option<String> {
    let formats: Vec<(&str, u64)> = c
        .get("formats")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|f| Some((f.get("format")?.as_str()?, count(f, "count"))))
        .collect();
    let date_format = c.get("date_format").and_then(Value::as_str);
    let plain = |f: &str| {
        matches!(f, "whole number" | "decimal point")
            || Some(f) == date_format
            || (f.starts_with("text, ") && f.matches(", ").count() == 1)
    };
    match formats.as_slice() {
        [] => return None,
        [(f, _)] if plain(f) && count(c, "other_formats") == 0 => return None,
        _ => {}
    }
    let mut shown = Vec::new();
    let (mut texts, mut rest) = (0, 0u64);
    for (f, n) in &formats {
        if f.starts_with("text, ") {
            texts += 1;
            if texts > TEXT_FORMATS_SHOWN {
                rest += n;
                continue;
            }
        }
        shown.push(format!("{n} rows [{f}]"));
    }
    let mut line = format!("formats {}", shown.join(", "));
    let rest = rest + count(c, "other_formats");
    if rest > 0 {
        line.push_str(&format!(", other text formats in {rest} rows"));
    }
    Some(line)
}

/// One profiled table: its file, sheet and profile.
struct Table<'a> {
    file: &'a str,
    sheet: Option<&'a str>,
    profile: &'a Value,
}

fn tables(extracts: &Value) -> Vec<Table<'_>> {
    let mut out = Vec::new();
    for f in extracts.as_array().into_iter().flatten() {
        let file = f["filename"].as_str().unwrap_or("?");
        if let Some(sheets) = f["sheets"].as_array() {
            for s in sheets {
                if s["profile"].is_object() {
                    out.push(Table {
                        file,
                        sheet: s["name"].as_str(),
                        profile: &s["profile"],
                    });
                }
            }
        } else if f["profile"].is_object() {
            out.push(Table {
                file,
                sheet: None,
                profile: &f["profile"],
            });
        }
    }
    out
}

fn normal(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

fn shapes_of(c: &Value) -> Vec<&str> {
    c["shapes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["shape"].as_str())
        .collect()
}

/// Whether `a` and `b` name the same thing: the same letters and digits,
/// or (when one of them is a unique key) one ending or starting with the
/// other (`id` and `customer_id`).
fn similar(a: &str, b: &str, either_key: bool) -> bool {
    let (a, b) = (normal(a), normal(b));
    if a.is_empty() || b.is_empty() {
        return false;
    }
    if a == b {
        return true;
    }
    let (short, long) = if a.len() < b.len() {
        (&a, &b)
    } else {
        (&b, &a)
    };
    either_key
        && short.len() >= 2
        && (long.ends_with(short.as_str()) || long.starts_with(short.as_str()))
}

fn place(t: &Table<'_>, column: &str) -> String {
    match t.sheet {
        Some(s) => format!("{} sheet \"{s}\" column \"{column}\"", t.file),
        None => format!("{} column \"{column}\"", t.file),
    }
}

/// Across files, the columns that look like join keys (same or similar
/// names, or a unique key), each pair with whether their shapes match;
/// "" when there is one file or no such pair.
pub fn join_keys(extracts: &Value) -> String {
    let tables = tables(extracts);
    let mut lines = Vec::new();
    for (i, a) in tables.iter().enumerate() {
        for b in tables[i + 1..].iter().filter(|b| b.file != a.file) {
            for ca in a.profile["columns"].as_array().into_iter().flatten() {
                for cb in b.profile["columns"].as_array().into_iter().flatten() {
                    let (na, nb) = (
                        ca["name"].as_str().unwrap_or(""),
                        cb["name"].as_str().unwrap_or(""),
                    );
                    let key = |t: &Table<'_>, n: &str| {
                        t.profile["unique_keys"]
                            .as_array()
                            .or(t.profile["unique_columns"].as_array())
                            .is_some_and(|k| k.iter().any(|x| x == n))
                    };
                    let (ka, kb) = (key(a, na), key(b, nb));
                    if !similar(na, nb, ka || kb) || lines.len() >= MAX_PAIRS {
                        continue;
                    }
                    let (sa, sb) = (shapes_of(ca), shapes_of(cb));
                    let verdict = if sa.is_empty() || sb.is_empty() {
                        "shapes unknown"
                    } else if sa.iter().all(|s| sb.contains(s)) && sb.iter().all(|s| sa.contains(s))
                    {
                        "shapes match"
                    } else if sa.iter().any(|s| sb.contains(s)) {
                        "shapes overlap only in part"
                    } else {
                        "shapes differ: the values need converting before they can match"
                    };
                    let unique = |k: bool| if k { " (unique key)" } else { "" };
                    lines.push(format!(
                        "- {}{} ↔ {}{}: {verdict} ({} vs {})",
                        place(a, na),
                        unique(ka),
                        place(b, nb),
                        unique(kb),
                        quoted(&sa),
                        quoted(&sb),
                    ));
                }
            }
        }
    }
    let found = found_lines(extracts);
    let mut out = Vec::new();
    if !lines.is_empty() {
        out.push(format!(
            "Columns that may join the files (by name or unique key), with their masked shapes:\n{}",
            lines.join("\n")
        ));
    }
    if !found.is_empty() {
        out.push(format!(
            "Values of id-like columns found in another file's column, compared normalised \
(an id by its digits without leading zeros, other values by their letters and digits case-folded) — \
join on the normalised form when the shapes differ:\n{}",
            found.join("\n")
        ));
    }
    out.join("\n")
}

/// The masked shapes of column `name` of table `sheet` of the file
/// called `file`.
fn shapes_in<'a>(extracts: &'a Value, file: &str, sheet: Option<&str>, name: &str) -> Vec<&'a str> {
    tables(extracts)
        .into_iter()
        .filter(|t| t.file == file && t.sheet == sheet)
        .flat_map(|t| t.profile["columns"].as_array().into_iter().flatten())
        .find(|c| c["name"] == name)
        .map(shapes_of)
        .unwrap_or_default()
}

/// One line per `join_matches` entry of the extracts (counts Maskflow
/// computed at approval).
fn found_lines(extracts: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for f in extracts.as_array().into_iter().flatten() {
        let file = f["filename"].as_str().unwrap_or("?");
        for m in f["join_matches"].as_array().into_iter().flatten() {
            let (column, other_file, other_column) = (
                m["column"].as_str().unwrap_or(""),
                m["other_file"].as_str().unwrap_or(""),
                m["other_column"].as_str().unwrap_or(""),
            );
            let (sheet, other_sheet) = (m["sheet"].as_str(), m["other_sheet"].as_str());
            let a = Table {
                file,
                sheet,
                profile: &Value::Null,
            };
            let b = Table {
                file: other_file,
                sheet: other_sheet,
                profile: &Value::Null,
            };
            out.push(format!(
                "- {}: {} of its {} distinct values are found in {} ({} vs {})",
                place(&a, column),
                count(m, "found"),
                count(m, "of"),
                place(&b, other_column),
                quoted(&shapes_in(extracts, file, sheet, column)),
                quoted(&shapes_in(extracts, other_file, other_sheet, other_column)),
            ));
            if out.len() >= MAX_PAIRS * 2 {
                return out;
            }
        }
    }
    out
}

fn quoted(shapes: &[&str]) -> String {
    if shapes.is_empty() {
        return "no values".into();
    }
    shapes
        .iter()
        .take(SHAPES_SHOWN)
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
