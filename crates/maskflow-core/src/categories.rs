//! The category columns a user switched on at approval (#28 point 1): each
//! goes into the approved extract's `categories` (top level, or its
//! sheet's) with its values and counts, so the AI sees exactly those and
//! the guard, which allows what the approved extract holds, allows exactly
//! those. A pure function over an extract's JSON.

use serde_json::{Value, json};

use maskflow_privacy::categories::CategoryCandidate;

/// One switched-on column of a file: its sheet (none for a single table)
/// and its name, as in the candidate.
pub type Chosen<'a> = (Option<&'a str>, &'a str);

/// Adds to `sent` (the extract as sent of file `file_id`) the candidates of
/// `raw` (its stored extract) that `chosen` names, in the candidates'
/// order. A choice that names no candidate of the file is an error naming it.
pub fn show(
    sent: &mut Value,
    raw: &Value,
    file_id: &str,
    candidates: &[CategoryCandidate],
    chosen: &[Chosen<'_>],
) -> Result<(), String> {
    let is = |k: &CategoryCandidate, (sheet, column): &Chosen<'_>| {
        k.column == *column && k.sheet.as_deref() == *sheet
    };
    for c in chosen {
        if !candidates.iter().any(|k| is(k, c)) {
            let on = c.0.map(|s| format!(", sheet {s:?}")).unwrap_or_default();
            return Err(format!(
                "show_categories: file {file_id}{on} has no category column {:?}",
                c.1
            ));
        }
    }
    for k in candidates {
        if !chosen.iter().any(|c| is(k, c)) {
            continue;
        }
        let column = json!({"column": k.column, "values": k.values});
        let target = match &k.sheet {
            None => Some(&mut *sent),
            Some(name) => raw["sheets"]
                .as_array()
                .and_then(|sheets| sheets.iter().position(|s| s["name"] == name.as_str()))
                .and_then(|i| sent.get_mut("sheets").and_then(|s| s.get_mut(i))),
        };
        let Some(Value::Object(target)) = target else {
            return Err(format!(
                "show_categories: column {:?} is on a sheet the extract does not have",
                k.column
            ));
        };
        match target
            .entry("categories")
            .or_insert_with(|| Value::Array(Vec::new()))
        {
            Value::Array(list) => list.push(column),
            _ => return Err("show_categories: the extract's categories is not a list".into()),
        }
    }
    Ok(())
}

/// Names in `sent` (the extract as sent) the candidates the user left
/// switched off (#40 point 5): each column's name and how many values it
/// has, never a value, in `switchable_categories` beside its table, so
/// the AI knows real values exist and can ask for them. A column whose
/// name is not sent as it is (a name that looked like a value) is left out.
pub fn offer(sent: &mut Value, candidates: &[CategoryCandidate], chosen: &[Chosen<'_>]) {
    for k in candidates {
        if chosen
            .iter()
            .any(|(sheet, column)| k.column == *column && k.sheet.as_deref() == *sheet)
        {
            continue;
        }
        let target = match &k.sheet {
            None => Some(&mut *sent),
            Some(name) => sent
                .get_mut("sheets")
                .and_then(Value::as_array_mut)
                .and_then(|sheets| sheets.iter_mut().find(|s| s["name"] == name.as_str())),
        };
        let Some(Value::Object(target)) = target else {
            continue;
        };
        let named = target
            .get("columns")
            .and_then(Value::as_array)
            .is_some_and(|c| c.iter().any(|c| c == k.column.as_str()));
        if !named {
            continue;
        }
        if let Value::Array(list) = target
            .entry("switchable_categories")
            .or_insert_with(|| Value::Array(Vec::new()))
        {
            list.push(json!({"column": k.column, "values": k.values.len()}));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use maskflow_extractors::CategoryValue;

    fn candidate(sheet: Option<&str>, column: &str) -> CategoryCandidate {
        CategoryCandidate {
            sheet: sheet.map(str::to_owned),
            column: column.into(),
            values: vec![CategoryValue {
                value: "Biscoe".into(),
                count: 12,
            }],
        }
    }

    #[test]
    fn only_the_chosen_columns_go_in_where_they_are() {
        let raw = json!({"filename": "p.xlsx", "columns": ["island"],
            "sheets": [{"name": "Smith", "columns": []}, {"name": "Data", "columns": ["island"]}]});
        let mut sent = raw.clone();
        sent["sheets"][0]["name"] = json!("Aaaaa");
        let all = [
            candidate(None, "species"),
            candidate(Some("Data"), "island"),
        ];
        show(&mut sent, &raw, "file_1", &all, &[(Some("Data"), "island")]).expect("show");
        assert_eq!(sent.get("categories"), None, "species was not chosen");
        assert_eq!(
            sent["sheets"][1]["categories"],
            json!([{"column": "island", "values": [{"value": "Biscoe", "count": 12}]}])
        );
        let mut none = raw.clone();
        show(&mut none, &raw, "file_1", &all, &[]).expect("none");
        assert_eq!(none, raw);
    }

    #[test]
    fn a_choice_of_no_candidate_is_refused_by_name() {
        let raw = json!({"filename": "p.csv", "columns": ["name"]});
        let err = show(&mut raw.clone(), &raw, "file_1", &[], &[(None, "name")])
            .expect_err("not a candidate");
        assert!(err.contains("\"name\""), "{err}");
    }
}
