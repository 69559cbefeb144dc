//! Column and sheet names in the extract that is sent (issue #26, break 9):
//! a name that is a value (a person, a company, an e-mail address, a date,
//! an ID, a number — [`maskflow_privacy::names::classify`]) is masked like a
//! sample, and listed for the approval view with why; the user may send
//! one as it is. Pure functions over an extract's JSON: the stored extract
//! keeps the real names (local only), [`outbound`] gives the one that is
//! approved, frozen into the version and sent.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;
use utoipa::ToSchema;

use maskflow_privacy::names::classify;

/// A column or sheet name that looks like a value, masked in the extract.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, ToSchema, TS)]
pub struct FlaggedName {
    /// Where it is in the file's extract, as a JSON pointer
    /// (`/columns/2`, `/sheets/0/name`, `/sheets/0/columns/2`).
    pub at: String,
    /// The name as it is in the file (shown to the user only, never sent
    /// unless they choose to send it as it is).
    pub name: String,
    /// The name as it is sent: masked like a sample value.
    pub masked: String,
    /// Why it was taken for a value, e.g. "looks like a person's name".
    pub reason: String,
}

/// The extract as it is sent, and the names it masked.
#[derive(Debug, Clone, PartialEq)]
pub struct Outbound {
    /// The extract with every flagged name masked, except those sent as they are.
    pub extract: Value,
    /// Every name that was flagged (masked or sent as it is), in order.
    pub flagged: Vec<FlaggedName>,
}

/// The extract that is sent for a stored `extract`: each flagged column or
/// sheet name is masked unless it is in `send_as_is` (the user's choice,
/// by the name itself, so a name met twice — a sheet's columns and their
/// mirror at the top — is one choice).
pub fn outbound(extract: &Value, send_as_is: &[String]) -> Outbound {
    let mut out = extract.clone();
    let mut flagged = Vec::new();
    walk(&mut out, String::new(), false, &mut |at, name| {
        let kind = classify(name)?;
        flagged.push(FlaggedName {
            at,
            name: name.to_owned(),
            masked: maskflow_extractors::mask(name),
            reason: kind.reason().to_owned(),
        });
        (!send_as_is.iter().any(|s| s == name)).then(|| maskflow_extractors::mask(name))
    });
    mask_profile_names(&mut out);
    Outbound {
        extract: out,
        flagged,
    }
}

/// A table's profile names its columns again (`profile.columns[].name`,
/// `profile.unique_columns`, in the table's column order): a value-like
/// name there is always masked and not listed again. Sending a name as it
/// is changes the places the approval view lists (`columns`, sheet names),
/// so the extract shown stays the extract sent.
fn mask_profile_names(v: &mut Value) {
    let masked = |name: &str| {
        classify(name)
            .is_some()
            .then(|| maskflow_extractors::mask(name))
    };
    match v {
        Value::Array(items) => items.iter_mut().for_each(mask_profile_names),
        Value::Object(o) => {
            if let Some(Value::Object(p)) = o.get_mut("profile") {
                if let Some(Value::Array(cols)) = p.get_mut("columns") {
                    for c in cols {
                        if let Some(Value::String(n)) = c.get_mut("name")
                            && let Some(m) = masked(n)
                        {
                            *n = m;
                        }
                    }
                }
                if let Some(Value::Array(keys)) = p.get_mut("unique_columns") {
                    for k in keys {
                        if let Value::String(n) = k
                            && let Some(m) = masked(n)
                        {
                            *n = m;
                        }
                    }
                }
            }
            for (k, x) in o.iter_mut() {
                if k != "profile" {
                    mask_profile_names(x);
                }
            }
        }
        _ => {}
    }
}

/// Visits every column name (`…/columns/N`) and sheet name
/// (`/sheets/N/name`) with its JSON pointer; a `Some` answer replaces it.
fn walk(
    v: &mut Value,
    at: String,
    in_sheets: bool,
    f: &mut dyn FnMut(String, &str) -> Option<String>,
) {
    match v {
        Value::Array(items) => {
            for (i, x) in items.iter_mut().enumerate() {
                walk(x, format!("{at}/{i}"), in_sheets, f);
            }
        }
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                let here = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                let is_name = (k == "name" && in_sheets) || k == "columns";
                match x {
                    Value::String(s) if is_name => {
                        if let Some(new) = f(here, s) {
                            *s = new;
                        }
                    }
                    Value::Array(names) if k == "columns" => {
                        for (i, n) in names.iter_mut().enumerate() {
                            if let Value::String(s) = n
                                && let Some(new) = f(format!("{here}/{i}"), s)
                            {
                                *s = new;
                            }
                        }
                    }
                    _ => walk(x, here, k == "sheets", f),
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pivot() -> Value {
        json!({
            "filename": "hours.xlsx", "kind": "excel",
            "columns": ["Week", "John Smith", "Maria Garcia", "Total"],
            "sample_rows": [["####-##-##", "##", "##", "###"]], "row_count": 52,
            "sheets": [
                {"name": "Acme Corp", "columns": ["Week", "John Smith", "Maria Garcia", "Total"],
                 "sample_rows": [], "row_count": 52},
                {"name": "Smith, J.", "columns": ["Date", "jane.doe@acme.com", "2024-03-01"],
                 "sample_rows": [], "row_count": 3},
                {"name": "Summary", "columns": ["order_id", "Amount", "Customer Name", "2023 Sales"],
                 "sample_rows": [], "row_count": 9}
            ]
        })
    }

    #[test]
    fn value_names_are_masked_and_listed_with_why() {
        let o = outbound(&pivot(), &[]);
        let e = &o.extract;
        assert_eq!(
            e["columns"],
            json!(["Week", "Aaaa Aaaaa", "Aaaaa Aaaaaa", "Total"])
        );
        assert_eq!(e["sheets"][0]["name"], "Aaaa Aaaa");
        assert_eq!(e["sheets"][1]["name"], "Aaaaa, A.");
        assert_eq!(
            e["sheets"][1]["columns"],
            json!(["Date", "aaaa.aaa@aaaa.aaa", "####-##-##"])
        );
        assert_eq!(e["sheets"][2], pivot()["sheets"][2], "ordinary names stay");
        let text = e.to_string();
        for raw in ["John", "Garcia", "Acme", "Smith", "jane.doe", "2024-03-01"] {
            assert!(!text.contains(raw), "{raw} left in {text}");
        }
        let at: Vec<&str> = o.flagged.iter().map(|f| f.at.as_str()).collect();
        assert!(at.contains(&"/columns/1"), "{at:?}");
        assert!(at.contains(&"/sheets/0/name"), "{at:?}");
        assert!(at.contains(&"/sheets/1/columns/2"), "{at:?}");
        let john = o.flagged.iter().find(|f| f.at == "/columns/1");
        assert_eq!(
            john.map(|f| (f.name.as_str(), f.masked.as_str(), f.reason.as_str())),
            Some(("John Smith", "Aaaa Aaaaa", "looks like a person's name"))
        );
        assert!(o.flagged.iter().all(|f| !f.at.starts_with("/sheets/2")));
    }

    #[test]
    fn a_profile_names_its_columns_as_the_extract_does() {
        let mut e = pivot();
        e["profile"] = json!({"rows_profiled": 52, "duplicate_rows": 0,
            "unique_columns": ["Week", "John Smith"],
            "columns": [{"name": "Week"}, {"name": "John Smith"}, {"name": "Maria Garcia"}]});
        let o = outbound(&e, &[]);
        let p = &o.extract["profile"];
        assert_eq!(p["columns"][1]["name"], "Aaaa Aaaaa");
        assert_eq!(p["columns"][2]["name"], "Aaaaa Aaaaaa");
        assert_eq!(p["unique_columns"], json!(["Week", "Aaaa Aaaaa"]));
        // Listed once, where `columns` has it.
        assert_eq!(o.flagged.len(), outbound(&pivot(), &[]).flagged.len());
        // A name sent as it is changes only where the approval view shows it.
        let sent = outbound(&e, &["Maria Garcia".to_owned()]);
        assert_eq!(sent.extract["columns"][2], "Maria Garcia");
        assert_eq!(
            sent.extract["profile"]["columns"][2]["name"],
            "Aaaaa Aaaaaa"
        );
    }

    #[test]
    fn a_name_sent_as_it_is_stays_everywhere_it_occurs() {
        let o = outbound(&pivot(), &["John Smith".to_owned()]);
        assert_eq!(o.extract["columns"][1], "John Smith");
        assert_eq!(o.extract["sheets"][0]["columns"][1], "John Smith");
        assert_eq!(o.extract["columns"][2], "Aaaaa Aaaaaa");
        assert_eq!(o.flagged.len(), outbound(&pivot(), &[]).flagged.len());
    }

    #[test]
    fn an_extract_without_value_names_is_unchanged() {
        let e = json!({"filename": "orders.csv", "columns": ["order_id", "Date", "Amount"],
                       "sample_rows": [["##", "####-##-##", "#.##"]], "row_count": 2});
        let o = outbound(&e, &[]);
        assert_eq!(o.extract, e);
        assert!(o.flagged.is_empty());
    }
}
