//! The structured replies of the three LLM roles, and their checks: the
//! validator's verdict, the clarifier's verdict, and the builder's workflow
//! (name, description, script, `fields`, `execution`). Pure: no I/O.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

/// The validator's reply: `{feasible, reason?}`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Feasibility {
    /// Whether a local Python script can do the task.
    pub feasible: bool,
    /// Why not (required when infeasible).
    #[serde(default)]
    pub reason: Option<String>,
}

impl Feasibility {
    /// Checks the reply beyond its shape.
    pub fn check(&self) -> Result<(), String> {
        if !self.feasible && self.reason.as_deref().is_none_or(|r| r.trim().is_empty()) {
            return Err("`reason` is required when `feasible` is false".into());
        }
        Ok(())
    }
}

/// The clarifier's reply: `{needs_clarification, question?}`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Clarification {
    /// Whether more information is needed before building.
    pub needs_clarification: bool,
    /// The question to ask (required when clarification is needed).
    #[serde(default)]
    pub question: Option<String>,
}

impl Clarification {
    /// Checks the reply beyond its shape.
    pub fn check(&self) -> Result<(), String> {
        if self.needs_clarification && self.question.as_deref().is_none_or(|q| q.trim().is_empty())
        {
            return Err("`question` is required when `needs_clarification` is true".into());
        }
        Ok(())
    }
}

/// The type of one input of a workflow.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, utoipa::ToSchema, ts_rs::TS,
)]
#[serde(rename_all = "lowercase")]
pub enum FieldType {
    /// One file.
    File,
    /// Several files.
    Files,
    /// Free text.
    Text,
    /// A number.
    Number,
    /// Yes or no.
    Boolean,
    /// A date (`YYYY-MM-DD`).
    Date,
    /// One of `options`.
    Choice,
}

/// One input of a workflow (what the user gives it at each run).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, utoipa::ToSchema, ts_rs::TS)]
#[ts(optional_fields)]
pub struct Field {
    /// The key the script reads, e.g. `sales_file`.
    pub name: String,
    /// What the UI shows.
    pub label: String,
    /// The input's type.
    #[serde(rename = "type")]
    pub field_type: FieldType,
    /// Whether a run needs it.
    #[serde(default)]
    pub required: bool,
    /// The choices of a `choice` field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Vec<String>>,
    /// File types a `file`/`files` field accepts, e.g. `[".csv"]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accept: Option<Vec<String>>,
}

/// One output the script writes.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, utoipa::ToSchema, ts_rs::TS)]
pub struct Output {
    /// The output's file name under `outputs/`.
    pub name: String,
    /// What it contains.
    pub description: String,
}

/// How a workflow runs.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, utoipa::ToSchema, ts_rs::TS)]
pub struct Execution {
    /// Always `python3`.
    pub runtime: String,
    /// Always `script.py`.
    pub entrypoint: String,
    /// Python packages beyond the standard library.
    #[serde(default)]
    pub requirements: Vec<String>,
    /// What the script writes.
    #[serde(default)]
    pub outputs: Vec<Output>,
    /// What the script reads of its file inputs (issue 41): each table it
    /// opens and the columns it uses, by name or by position. Checked
    /// against the test files when it is built, and against every later
    /// run's files before the script starts. `None`: not declared (a
    /// version built before this existed), and every difference counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reads: Option<Vec<Read>>,
    /// The change each period is expected to bring (issue 41, point 6), so
    /// the checks follow it: [`DRIFTS`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(optional, as = "Option<Vec<String>>")]
    pub drift: Vec<String>,
}

/// The expected drifts a workflow may declare: `new_categories` (a mapped
/// column gains values: reported, not refused), `row_count` (the output's
/// rows may halve or double: not a jump).
pub const DRIFTS: &[&str] = &["new_categories", "row_count"];

/// One table a script reads of one file input: the file's own table, a
/// workbook's sheet, or a PDF's or Word document's table.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, utoipa::ToSchema, ts_rs::TS)]
#[ts(optional_fields)]
pub struct Read {
    /// The input (`fields[].name`).
    pub input: String,
    /// A workbook sheet, by its name in the extract.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sheet: Option<String>,
    /// A workbook sheet, by its 0-based index (for a sheet whose name is masked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sheet_index: Option<usize>,
    /// A PDF's or Word document's table, by its 0-based index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<usize>,
    /// The columns it uses; none: it uses the table as a whole.
    #[serde(default)]
    pub columns: Vec<ColumnRead>,
}

/// One column a script uses: by name, or by 0-based position when the
/// script addresses it so (`df.columns[2]`, `row[2]`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, utoipa::ToSchema, ts_rs::TS)]
#[ts(optional_fields)]
pub struct ColumnRead {
    /// Its name in the extract.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its 0-based position, when the script addresses it by position.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<usize>,
    /// The script maps its values one by one (a category column): a value
    /// the approved file did not have is refused, unless the workflow
    /// declares the `new_categories` drift.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(optional, as = "Option<bool>")]
    pub mapped: bool,
    /// The date or number layout the script parses (`%d/%m/%Y`): a file
    /// whose column has another layout is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// The script expects it to be a unique key: a file where it is not is refused.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(optional, as = "Option<bool>")]
    pub unique: bool,
}

/// The builder's reply: a complete workflow.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct WorkflowSpec {
    /// A short name, e.g. "Sales Data Merger".
    pub name: String,
    /// One or two sentences.
    pub description: String,
    /// The Python source of `script.py`.
    pub script: String,
    /// The workflow's inputs.
    pub fields: Vec<Field>,
    /// How it runs.
    pub execution: Execution,
}

/// Longest accepted workflow name, in characters.
pub const MAX_NAME_CHARS: usize = 120;

/// Checks a workflow's name, whoever chose it (the builder's reply, a
/// rename): 1 to [`MAX_NAME_CHARS`] characters on one line. A name is
/// written into other programs' files (a systemd unit's `Description=`,
/// which ends a line at CR as at LF), so no control character (CR, LF,
/// tab, NUL…) nor Unicode line separator is accepted (issue 39).
pub fn check_name(name: &str) -> Result<(), String> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
        return Err(format!("`name` must be 1 to {MAX_NAME_CHARS} characters"));
    }
    if let Some(c) = name
        .chars()
        .find(|c| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}'))
    {
        return Err(format!(
            "`name` must be one line of plain text: it holds the control character {c:?}; \
             give a short name without line breaks, tabs or other control characters"
        ));
    }
    Ok(())
}

impl WorkflowSpec {
    /// Checks the workflow beyond its shape; the error says what to fix.
    pub fn check(&self) -> Result<(), String> {
        check_name(&self.name)?;
        if self.description.trim().is_empty() {
            return Err("`description` must not be empty".into());
        }
        if self.script.trim().is_empty() {
            return Err("`script` must contain the Python source".into());
        }
        if self.execution.runtime != "python3" {
            return Err("`execution.runtime` must be \"python3\"".into());
        }
        if self.execution.entrypoint != "script.py" {
            return Err("`execution.entrypoint` must be \"script.py\"".into());
        }
        let mut names = HashSet::new();
        for (i, f) in self.fields.iter().enumerate() {
            let ok_name = !f.name.is_empty()
                && f.name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !f.name.starts_with(|c: char| c.is_ascii_digit());
            if !ok_name {
                return Err(format!(
                    "fields[{i}].name {:?} must be an identifier (letters, digits, _)",
                    f.name
                ));
            }
            if !names.insert(f.name.as_str()) {
                return Err(format!("fields[{i}].name {:?} is used twice", f.name));
            }
            if f.label.trim().is_empty() {
                return Err(format!("fields[{i}].label must not be empty"));
            }
            if f.field_type == FieldType::Choice && f.options.as_ref().is_none_or(|o| o.is_empty())
            {
                return Err(format!("fields[{i}] is a choice and needs `options`"));
            }
        }
        for (i, r) in self.execution.requirements.iter().enumerate() {
            if r.trim().is_empty() {
                continue; // blank entries are ignored everywhere
            }
            // A requirement is data: a package name, never a URL, a path,
            // a marker or an installer option (issue 26).
            maskflow_pyenv::Requirement::parse(r)
                .map_err(|e| format!("execution.requirements[{i}]: {e}"))?;
        }
        for (i, r) in self.execution.reads.iter().flatten().enumerate() {
            let is_file = self.fields.iter().any(|f| {
                f.name == r.input && matches!(f.field_type, FieldType::File | FieldType::Files)
            });
            if !is_file {
                return Err(format!(
                    "execution.reads[{i}].input {:?} must be the name of a `file` or `files` field",
                    r.input
                ));
            }
            let places = [
                r.sheet.is_some(),
                r.sheet_index.is_some(),
                r.table.is_some(),
            ];
            if places.iter().filter(|p| **p).count() > 1 {
                return Err(format!(
                    "execution.reads[{i}] must name one of `sheet`, `sheet_index` or `table`, not several"
                ));
            }
            for (j, c) in r.columns.iter().enumerate() {
                if c.name.as_deref().is_none_or(|n| n.is_empty()) && c.position.is_none() {
                    return Err(format!(
                        "execution.reads[{i}].columns[{j}] needs a `name` or a `position`"
                    ));
                }
            }
        }
        for (i, d) in self.execution.drift.iter().enumerate() {
            if !DRIFTS.contains(&d.as_str()) {
                return Err(format!(
                    "execution.drift[{i}] {d:?} must be one of: {}",
                    DRIFTS.join(", ")
                ));
            }
        }
        for (i, o) in self.execution.outputs.iter().enumerate() {
            if o.name.trim().is_empty() || o.name.contains(['/', '\\']) || o.name.contains("..") {
                return Err(format!(
                    "execution.outputs[{i}].name must be a plain file name"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    pub(crate) fn good() -> serde_json::Value {
        json!({
            "name": "Sales Data Merger",
            "description": "Merges CSV files by date column",
            "script": "import json\nprint('hi')\n",
            "fields": [{"name": "sales", "label": "Sales file", "type": "file", "required": true, "accept": [".csv"]}],
            "execution": {"runtime": "python3", "entrypoint": "script.py", "requirements": [], "outputs": [{"name": "merged.csv", "description": "the merged rows"}]}
        })
    }

    fn parse(v: serde_json::Value) -> Result<WorkflowSpec, String> {
        let s: WorkflowSpec = serde_json::from_value(v).map_err(|e| e.to_string())?;
        s.check()?;
        Ok(s)
    }

    #[test]
    fn a_good_workflow_passes() {
        assert!(parse(good()).is_ok());
    }

    #[test]
    fn bad_workflows_say_what_is_wrong() {
        let cases: Vec<(&str, serde_json::Value, &str)> = vec![
            ("/name", json!(""), "`name`"),
            (
                "/name",
                json!("Tidy\r[Service]\rExecStartPre=/bin/sh -c \"id\""),
                "control character '\\r'",
            ),
            ("/name", json!("Two\nlines"), "control character '\\n'"),
            ("/name", json!("Tab\there"), "control character '\\t'"),
            ("/name", json!("Line\u{2028}separator"), "control character"),
            ("/script", json!("  "), "`script`"),
            ("/execution/runtime", json!("node"), "runtime"),
            ("/execution/entrypoint", json!("main.py"), "entrypoint"),
            ("/fields/0/type", json!("color"), "unknown variant"),
            ("/fields/0/name", json!("my file"), "identifier"),
            ("/fields/0/type", json!("choice"), "options"),
            (
                "/execution/outputs/0/name",
                json!("../x"),
                "plain file name",
            ),
        ];
        for (pointer, value, needle) in cases {
            let mut v = good();
            *v.pointer_mut(pointer).expect("pointer") = value;
            let err = parse(v).expect_err(pointer);
            assert!(err.contains(needle), "{pointer}: {err}");
        }
    }

    /// Issue 26: a hostile builder's requirement is refused when its reply
    /// is parsed, with a message naming it (the reply goes back for revision).
    #[test]
    fn requirements_that_are_not_package_names_are_refused() {
        let hostile = [
            "xlsxwriter @ http://127.0.0.1:1/x.whl",
            "pandas; python_version>\"3\"",
            "pandas\n--index-url http://127.0.0.1:1/simple",
            "-r /etc/passwd",
            "--find-links http://127.0.0.1:1/",
            "./local/path",
            "file:///tmp/x.whl",
            "git+https://github.com/a/b",
            "pandas \\\n--index-url http://127.0.0.1:1/simple",
        ];
        for text in hostile {
            let mut v = good();
            *v.pointer_mut("/execution/requirements").expect("pointer") = json!(["pandas", text]);
            let err = parse(v).expect_err(text);
            assert!(err.starts_with("execution.requirements[1]: "), "{err}");
            assert!(err.contains(&format!("{text:?}")), "{err}");
        }
        let mut v = good();
        *v.pointer_mut("/execution/requirements").expect("pointer") =
            json!(["pandas[extra]>=2,<3", "python-docx==1.1", "tqdm"]);
        assert!(parse(v).is_ok());
    }

    #[test]
    fn verdicts_need_their_reason_or_question() {
        assert!(
            Feasibility {
                feasible: false,
                reason: None
            }
            .check()
            .is_err()
        );
        assert!(
            Feasibility {
                feasible: true,
                reason: None
            }
            .check()
            .is_ok()
        );
        assert!(
            Clarification {
                needs_clarification: true,
                question: Some(" ".into())
            }
            .check()
            .is_err()
        );
        assert!(
            Clarification {
                needs_clarification: false,
                question: None
            }
            .check()
            .is_ok()
        );
    }
}
