//! The `script` step: what it runs is a type, [`ScriptSource`] — a Python
//! file or an approved workflow — never two optional fields the engine must
//! reconcile. The document keeps its two keys (`path`, `workflow`); reading
//! one turns them into a source and refuses a step with both or neither,
//! and a file path that is absolute or leaves the run's working folder
//! (`..`) — the rule file checks follow ([`crate::expr::files::check_relative`];
//! issue 39): a script names a file of the run, never `/etc/shadow`.

use std::path::PathBuf;

use super::*;

/// What a `script` step runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScriptSource {
    /// A Python file (written relative: under the run's working folder;
    /// handed to the script runner resolved).
    File(PathBuf),
    /// An approved workflow's id (`wf_…`): the app runs its active
    /// version's script with that version's Python environment.
    Workflow(String),
}

impl ScriptSource {
    /// The file or the workflow id, as shown in a transcript.
    pub fn shown(&self) -> String {
        match self {
            ScriptSource::File(p) => p.display().to_string(),
            ScriptSource::Workflow(id) => id.clone(),
        }
    }
}

/// Runs an approved workflow or a Python file, locally.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(into = "ScriptStepDoc")]
pub struct ScriptStep {
    /// The step's id: required in the graph form, optional in the list form
    /// (a step with an id keeps its output at `steps.<id>`).
    pub id: Option<Text>,
    /// Shown in the transcript; defaults to the step type.
    pub label: Option<Text>,
    /// Graph form only: the node that follows (absent: the flow ends).
    pub next: Option<Text>,
    /// Must hold before the step runs; a failure stops the run with its message.
    pub preconditions: Vec<Condition>,
    /// Must hold after it ran; a failure retries once with feedback, then asks the user.
    pub postconditions: Vec<Condition>,
    /// What it runs.
    pub source: ScriptSource,
    /// Arguments; `{{path}}` templates allowed.
    pub args: Vec<Text>,
    /// Time limit in seconds (default 300).
    pub timeout_seconds: Option<u32>,
}

/// A `script` step as written in a flow document: exactly one of
/// `workflow` and `path`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ScriptStepDoc {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<Text>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    label: Option<Text>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    next: Option<Text>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    preconditions: Vec<Condition>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    postconditions: Vec<Condition>,
    /// An approved workflow's id (`wf_…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    workflow: Option<Text>,
    /// A Python file (relative paths are under the working folder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    path: Option<Text>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    args: Vec<Text>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timeout_seconds: Option<u32>,
}

/// Why a written `script` step has no source it may run.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
pub enum ScriptSourceError {
    /// Both `workflow` and `path`, or neither.
    #[error("a script step needs exactly one of workflow or path")]
    Missing,
    /// `path` is absolute or leaves the run's working folder.
    #[error(
        "{path:?}: {why}; put the script in the run's working folder, or name an approved \
         workflow with `workflow`"
    )]
    Outside {
        /// The path as written.
        path: String,
        /// What is wrong with it.
        why: &'static str,
    },
}

impl<'de> Deserialize<'de> for ScriptStep {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let doc = ScriptStepDoc::deserialize(d)?;
        ScriptStep::try_from(doc).map_err(|e| match e {
            ScriptSourceError::Missing => de::Error::custom(e),
            ScriptSourceError::Outside { .. } => {
                de::Error::custom(super::read::marked("path", &e.to_string()))
            }
        })
    }
}

impl TryFrom<ScriptStepDoc> for ScriptStep {
    type Error = ScriptSourceError;

    fn try_from(d: ScriptStepDoc) -> Result<Self, Self::Error> {
        let source = match (d.workflow, d.path) {
            (Some(wf), None) => ScriptSource::Workflow(wf.as_str().to_owned()),
            (None, Some(path)) => {
                crate::expr::files::check_relative(path.as_str()).map_err(|why| {
                    ScriptSourceError::Outside {
                        path: path.as_str().to_owned(),
                        why,
                    }
                })?;
                ScriptSource::File(PathBuf::from(path.as_str()))
            }
            _ => return Err(ScriptSourceError::Missing),
        };
        Ok(ScriptStep {
            id: d.id,
            label: d.label,
            next: d.next,
            preconditions: d.preconditions,
            postconditions: d.postconditions,
            source,
            args: d.args,
            timeout_seconds: d.timeout_seconds,
        })
    }
}

impl From<ScriptStep> for ScriptStepDoc {
    fn from(s: ScriptStep) -> Self {
        let (workflow, path) = match &s.source {
            ScriptSource::Workflow(wf) => (Text::new(wf), None),
            ScriptSource::File(p) => (None, Text::new(&p.to_string_lossy())),
        };
        ScriptStepDoc {
            id: s.id,
            label: s.label,
            next: s.next,
            preconditions: s.preconditions,
            postconditions: s.postconditions,
            workflow,
            path,
            args: s.args,
            timeout_seconds: s.timeout_seconds,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn step(v: Value) -> Result<FlowDef, DefinitionError> {
        from_value(&json!({"steps": [v]}))
    }

    #[test]
    fn a_script_step_reads_its_source_as_a_type_and_writes_it_back_as_written() {
        for (written, source) in [
            (
                json!({"type": "script", "workflow": "wf_1", "args": ["{{x}}"]}),
                ScriptSource::Workflow("wf_1".into()),
            ),
            (
                json!({"type": "script", "path": "tidy.py", "timeoutSeconds": 5}),
                ScriptSource::File("tidy.py".into()),
            ),
        ] {
            let def = step(written.clone()).expect("valid");
            let Some([Step::Script(s)]) = def.steps.as_deref() else {
                panic!("one script step: {def:?}");
            };
            assert_eq!(s.source, source);
            let back = serde_json::to_value(&def).expect("serialise");
            assert_eq!(back["steps"][0], written);
        }
        let def = step(json!({"type": "script", "workflow": " wf_2 "})).expect("valid");
        let Some([Step::Script(s)]) = def.steps.as_deref() else {
            panic!("one script step: {def:?}");
        };
        assert_eq!(s.source, ScriptSource::Workflow("wf_2".into()), "trimmed");
    }

    #[test]
    fn a_script_step_with_both_sources_or_none_is_refused_where_it_is() {
        for bad in [
            json!({"type": "script", "workflow": "wf_1", "path": "a.py"}),
            json!({"type": "script", "args": ["x"]}),
            json!({"type": "script", "path": "  "}),
        ] {
            let e = step(bad.clone()).expect_err("refused");
            assert!(e.path.starts_with("steps[0]"), "{bad}: {e}");
        }
        let e =
            step(json!({"type": "script", "workflow": "wf_1", "path": "a.py"})).expect_err("both");
        assert_eq!(
            e.to_string(),
            "steps[0]: a script step needs exactly one of workflow or path"
        );
        let e = step(json!({"type": "script", "workflow": "wf_1", "colour": "red"}))
            .expect_err("unknown field");
        assert_eq!(e.path, "steps[0].colour", "{e}");
    }

    /// Issue 39: the rule postconditions follow — relative, inside the
    /// run's working folder.
    #[test]
    fn a_script_path_outside_the_working_folder_is_refused_where_it_is() {
        for bad in [
            "/etc/shadow",
            "../../secret.txt",
            "scripts/../../x.py",
            "a\\..\\b.py",
            "\\\\server\\share\\x.py",
        ] {
            let e = step(json!({"type": "script", "path": bad})).expect_err(bad);
            assert_eq!(e.path, "steps[0].path", "{bad}: {e}");
            assert!(
                e.to_string().contains(&format!("{bad:?}"))
                    && e.to_string().contains("working folder"),
                "{bad}: {e}"
            );
        }
        assert!(step(json!({"type": "script", "path": "scripts/./tidy.py"})).is_ok());
    }
}
