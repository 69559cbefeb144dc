//! The server never trusts an extract a client sends: with uploaded files,
//! the stored extracts are the ones used (a different one is refused), and
//! an extract sent alone must hold only masked samples — its names are the
//! only raw text it may carry. Pure checks over the extracts' JSON.

use serde_json::Value;

/// Keys whose strings are names (allowed raw) or Maskflow's own notes.
const NAME_KEYS: [&str; 8] = [
    "filename",
    "columns",
    "unique_columns",
    "name",
    "kind",
    "delimiter",
    "encoding",
    "format",
];

/// Why a client's extracts were refused, as a sentence.
pub fn check_against_stored(stored: &[Value], given: &[Value]) -> Result<(), String> {
    let same = stored.len() == given.len()
        && stored
            .iter()
            .zip(given)
            .all(|(s, g)| strings(s) == strings(g));
    if same {
        Ok(())
    } else {
        Err(
            "file_extracts differs from the stored extracts of file_ids; the stored extracts \
             are the ones used, so send file_ids alone (or the extracts exactly as uploaded)"
                .into(),
        )
    }
}

/// Checks that every sample value, preview, heading and OCR text of an
/// extract sent without `file_ids` is masked (only `A`, `a` and `#` for
/// letters and digits).
pub fn check_masked(extract: &Value) -> Result<(), String> {
    let mut bad = Vec::new();
    walk(extract, None, &mut |key, s| {
        let is_name = key.is_some_and(|k| NAME_KEYS.contains(&k) || k == "warnings");
        if !is_name && !profile_word(key, s) && maskflow_extractors::mask(s) != s {
            bad.push(key.unwrap_or("value").to_owned());
        }
    });
    bad.dedup();
    match bad.first() {
        None => Ok(()),
        Some(key) => Err(format!(
            "file_extracts holds unmasked text (in \"{key}\"): an extract sent without file_ids \
             may only carry masked samples"
        )),
    }
}

/// Whether `s` is one of the few words a table's profile writes under
/// `key`: a type from a closed list, a `strftime` date layout, a number
/// rounded to two significant figures (at most four digits with its
/// exponent). None of them can carry a value of the file.
fn profile_word(key: Option<&str>, s: &str) -> bool {
    const TYPES: [&str; 9] = [
        "integer", "decimal", "date", "datetime", "time", "boolean", "text", "empty", "mixed",
    ];
    match key {
        Some("inferred_type") => TYPES.contains(&s),
        Some("date_format") => {
            s.len() <= 64
                && s.replace(" or ", "/")
                    .chars()
                    .all(|c| "%YmdbBHMS/-.:, T".contains(c))
        }
        Some("min" | "max") => {
            s.parse::<f64>().is_ok()
                && s.chars().all(|c| c.is_ascii_digit() || "-.e".contains(c))
                && s.chars().filter(char::is_ascii_digit).count() <= 4
        }
        _ => false,
    }
}

/// The string leaves of an extract that carry content (not warnings), in order.
fn strings(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(v, None, &mut |key, s| {
        if key != Some("warnings") {
            out.push(s.to_owned());
        }
    });
    out
}

fn walk<'a>(v: &'a Value, key: Option<&'a str>, f: &mut dyn FnMut(Option<&'a str>, &'a str)) {
    match v {
        Value::String(s) => f(key, s),
        Value::Array(a) => a.iter().for_each(|x| walk(x, key, f)),
        Value::Object(o) => o.iter().for_each(|(k, x)| walk(x, Some(k), f)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn extract(sample: &str) -> Value {
        json!({"filename": "people.csv", "columns": ["name", "city"],
               "sample_rows": [[sample, "Aaaaa"]], "row_count": 3,
               "warnings": ["counted 3 rows"]})
    }

    #[test]
    fn a_different_extract_with_file_ids_is_refused() {
        let stored = [extract("Aaaa Aaaaa")];
        assert!(check_against_stored(&stored, &[extract("Aaaa Aaaaa")]).is_ok());
        let mut counted = extract("Aaaa Aaaaa");
        counted["row_count"] = json!(4);
        counted["warnings"] = json!([]);
        assert!(check_against_stored(&stored, &[counted]).is_ok());
        let err = check_against_stored(&stored, &[extract("John Smith")]).unwrap_err();
        assert!(err.contains("differs from the stored extracts"), "{err}");
        assert!(check_against_stored(&stored, &[]).is_err());
    }

    #[test]
    fn an_extract_without_file_ids_must_be_masked() {
        assert!(check_masked(&extract("Aaaa Aaaaa ##-#")).is_ok());
        let err = check_masked(&extract("John Smith")).unwrap_err();
        assert!(err.contains("sample_rows"), "{err}");
        let doc = json!({"filename": "r.pdf", "document": {"text_preview": "Patient Zebulon", "headings": []}});
        assert!(check_masked(&doc).is_err());
    }

    #[test]
    fn a_profile_passes_with_its_own_words_and_only_those() {
        let mut e = extract("Aaaa Aaaaa");
        e["profile"] = json!({"rows_profiled": 3, "duplicate_rows": 0, "unique_columns": ["name"],
            "columns": [{"name": "joined", "inferred_type": "date", "date_format": "%d/%m/%Y or %m/%d/%Y",
                         "min": "-1.2e3", "max": "99", "shapes": [{"shape": "##/##/####", "count": 3}]}]});
        assert!(check_masked(&e).is_ok(), "{:?}", check_masked(&e));
        for named_month in ["%d %b %Y", "%b %d, %Y", "%B %d %Y", "%d-%b-%Y"] {
            let mut ok = e.clone();
            ok["profile"]["columns"][0]["date_format"] = json!(named_month);
            assert!(check_masked(&ok).is_ok(), "{named_month}");
        }
        for (key, raw) in [
            ("inferred_type", "Zebulon"),
            ("date_format", "Okonkwo"),
            ("min", "1234.56"),
            ("max", "5558675309"),
        ] {
            let mut bad = e.clone();
            bad["profile"]["columns"][0][key] = json!(raw);
            assert!(check_masked(&bad).is_err(), "{key}: {raw}");
        }
    }
}
