//! The server never trusts an extract a client sends: with uploaded files,
//! the stored extracts are the ones used (a different one is refused), and
//! an extract sent alone must hold only masked samples — its names are the
//! only raw text it may carry. Pure checks over the extracts' JSON.

use serde_json::Value;

/// Keys whose strings are names (allowed raw) or Maskflow's own notes.
const NAME_KEYS: [&str; 7] = [
    "filename",
    "columns",
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
        if !is_name && maskflow_extractors::mask(s) != s {
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
}
