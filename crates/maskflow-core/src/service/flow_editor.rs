//! The flow editor behind the facade (issue 31, point 1): a flow's file
//! opened with its revision (a SHA-256 of the bytes on disk), a draft checked
//! by the loader's own parser and checks (never rules of the editor's), and
//! a save through the same checks that refuses to overwrite a file changed
//! on disk since the editor opened it.
//!
//! The file is written whole through a temporary file and a rename, as
//! agents are, so a run starting meanwhile reads the old flow or the new
//! one. Names are the loader's file stems: nothing else reaches a path.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use ts_rs::TS;
use utoipa::ToSchema;

use super::Service;
use crate::error::{CoreError, Result};
use maskflow_flows::agents::{self, flows_dir, valid_name};
use maskflow_flows::definition::{self, DefinitionError, FlowDef, STEP_TYPES};
use maskflow_flows::mermaid;

/// Largest flow text the editor takes (a flow is a few kilobytes).
pub const MAX_FLOW_TEXT: usize = 1024 * 1024;

/// Saves are checked and written one at a time in this process, so two
/// windows saving at once cannot both pass the revision check.
static SAVING: Mutex<()> = Mutex::new(());

/// One thing the loader refuses in a draft.
#[derive(Serialize, Clone, Debug, PartialEq, Eq, ToSchema, TS)]
pub struct FlowMessage {
    /// The JSON path of the offending value (`$` for the whole document).
    pub path: String,
    /// What is wrong, in the loader's words.
    pub message: String,
}

/// What the loader makes of a draft: its messages, or its diagram.
#[derive(Serialize, Clone, Debug, PartialEq, ToSchema, TS)]
pub struct FlowCheck {
    /// The loader accepts it (no messages).
    pub valid: bool,
    /// Why it would be disabled, in the loader's words.
    pub messages: Vec<FlowMessage>,
    /// The flow as Mermaid, when valid.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub mermaid: Option<String>,
}

/// A flow file as the editor opens it.
#[derive(Serialize, Clone, Debug, PartialEq, ToSchema, TS)]
pub struct FlowSource {
    /// The flow's name (its file stem).
    pub name: String,
    /// The file's text as it is on disk.
    pub text: String,
    /// The SHA-256 of the file's bytes: what a save says it started from.
    pub revision: String,
    /// What the loader makes of it.
    pub check: FlowCheck,
}

/// A draft to check without saving.
#[derive(Deserialize, Serialize, Clone, Debug, ToSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct FlowDraft {
    /// The flow's JSON text.
    pub text: String,
}

/// A draft to save as `flows/<name>.json`.
#[derive(Deserialize, Serialize, Clone, Debug, ToSchema, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FlowSave {
    /// The flow's JSON text.
    pub text: String,
    /// The revision the editor opened; absent for a new flow (refused when
    /// the file exists).
    #[serde(default)]
    #[ts(optional)]
    pub base_revision: Option<String>,
}

/// A saved flow.
#[derive(Serialize, Clone, Debug, PartialEq, ToSchema, TS)]
pub struct FlowSaved {
    /// The flow's name.
    pub name: String,
    /// The revision now on disk (the next save's base).
    pub revision: String,
    /// Its diagram and (empty) messages.
    pub check: FlowCheck,
}

/// One agent the step forms offer, with its commands.
#[derive(Serialize, Clone, Debug, PartialEq, ToSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct EditorAgent {
    /// The agent's name (what `agentType` holds).
    pub name: String,
    /// Its name for people, when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub display_name: Option<String>,
    /// The command files `agents/<name>/commands/*.json` (what `commandName` may hold), sorted.
    pub commands: Vec<String>,
    /// Why the agent's file cannot be used, if so.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error: Option<String>,
}

/// What the editor's pickers offer.
#[derive(Serialize, Clone, Debug, PartialEq, ToSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct FlowEditorOptions {
    /// The step types the loader knows, as written in `type`.
    pub step_types: Vec<String>,
    /// The agents in `agents/` and the agents that only have commands, sorted.
    pub agents: Vec<EditorAgent>,
}

fn bad_name(name: &str) -> CoreError {
    CoreError::InvalidRequest(format!(
        "flow name {name:?} may only use letters, digits, - and _ (at most 128), \
         so that it names a file in the flows folder"
    ))
}

fn flow_path(home: &Path, name: &str) -> Result<PathBuf> {
    if valid_name(name) {
        Ok(flows_dir(home).join(format!("{name}.json")))
    } else {
        Err(bad_name(name))
    }
}

/// The revision of a file's bytes.
fn revision_of(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The file's bytes, or `None` when there is none.
fn read_bytes(path: &Path) -> Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(CoreError::io(format!("cannot read {}", path.display()), e)),
    }
}

fn message(e: DefinitionError) -> FlowMessage {
    FlowMessage {
        path: e.path,
        message: e.message,
    }
}

/// Parses `text` the way the loader does, agents of `home` included (a
/// flow naming an agent Maskflow does not know is disabled, so not saved).
fn parse(home: &Path, text: &str) -> std::result::Result<FlowDef, FlowMessage> {
    if text.len() > MAX_FLOW_TEXT {
        return Err(FlowMessage {
            path: "$".into(),
            message: format!(
                "the flow is {} bytes; at most {MAX_FLOW_TEXT} are accepted",
                text.len()
            ),
        });
    }
    definition::parse(text)
        .and_then(|def| agents::check_flow_agents(home, &def).map(|()| def))
        .map_err(message)
}

/// The loader's verdict on `text` (over the agents of `home`), with the
/// diagram when it is accepted.
pub fn check_text(home: &Path, text: &str) -> FlowCheck {
    match parse(home, text) {
        Ok(def) => FlowCheck {
            valid: true,
            messages: Vec::new(),
            mermaid: Some(mermaid::export(&def)),
        },
        Err(m) => FlowCheck {
            valid: false,
            messages: vec![m],
            mermaid: None,
        },
    }
}

/// `agents/<agent>/commands/*.json` stems the loader accepts, sorted.
fn commands_of(home: &Path, agent: &str) -> Vec<String> {
    let dir = agents::agents_dir(home).join(agent).join("commands");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .flatten()
        .filter(|e| e.path().is_file())
        .filter_map(|e| {
            let file = e.file_name().to_string_lossy().into_owned();
            let stem = file.strip_suffix(".json")?;
            valid_name(stem).then(|| stem.to_owned())
        })
        .collect();
    out.sort();
    out
}

impl Service {
    /// A flow's file as the editor opens it: text, revision and the loader's verdict.
    pub fn flow_source(&self, name: &str) -> Result<FlowSource> {
        let path = flow_path(self.home(), name)?;
        let bytes = read_bytes(&path)?.ok_or_else(|| CoreError::NotFound {
            what: "flow",
            id: name.to_owned(),
        })?;
        let revision = revision_of(&bytes);
        let text = String::from_utf8(bytes).map_err(|_| {
            CoreError::InvalidRequest(format!("flows/{name}.json is not UTF-8 text"))
        })?;
        let check = check_text(self.home(), &text);
        Ok(FlowSource {
            name: name.to_owned(),
            text,
            revision,
            check,
        })
    }

    /// Checks a draft with the loader's own parser and checks; nothing is written.
    pub fn flow_validate(&self, draft: FlowDraft) -> Result<FlowCheck> {
        Ok(check_text(self.home(), &draft.text))
    }

    /// Saves a draft as `flows/<name>.json` when the loader accepts it and
    /// the file is still the one the editor opened (`conflict` otherwise).
    pub fn flow_save(&self, name: &str, save: FlowSave) -> Result<FlowSaved> {
        let path = flow_path(self.home(), name)?;
        let def = parse(self.home(), &save.text).map_err(|m| {
            CoreError::InvalidRequest(format!(
                "flows/{name}.json is not saved: {}: {}",
                m.path, m.message
            ))
        })?;
        let text = serde_json::to_string_pretty(&def)
            .map(|t| format!("{t}\n"))
            .map_err(|e| CoreError::Corrupt(format!("cannot print the flow: {e}")))?;
        let _one = SAVING.lock().unwrap_or_else(|p| p.into_inner());
        let on_disk = read_bytes(&path)?.map(|b| revision_of(&b));
        match (save.base_revision.as_deref(), on_disk.as_deref()) {
            (None, None) => {}
            (Some(base), Some(now)) if base == now => {}
            (None, Some(_)) => {
                return Err(CoreError::Conflict(format!(
                    "a flow named {name} exists already; open it to edit it, or pick another name"
                )));
            }
            (Some(_), None) => {
                return Err(CoreError::Conflict(format!(
                    "flows/{name}.json was removed outside Maskflow since you opened it; \
                     save it as a new flow to write it again"
                )));
            }
            (Some(_), Some(_)) => {
                return Err(CoreError::Conflict(format!(
                    "flows/{name}.json changed outside Maskflow since you opened it; \
                     reload it, or keep editing and overwrite it"
                )));
            }
        }
        write_atomically(&path, name, text.as_bytes())?;
        Ok(FlowSaved {
            name: name.to_owned(),
            revision: revision_of(text.as_bytes()),
            check: FlowCheck {
                valid: true,
                messages: Vec::new(),
                mermaid: Some(mermaid::export(&def)),
            },
        })
    }

    /// The step types and the agents (with their commands) the step forms offer.
    pub fn flow_editor_options(&self) -> Result<FlowEditorOptions> {
        let home = self.home();
        let listed =
            agents::list_agents(home).map_err(|e| CoreError::InvalidRequest(e.to_string()))?;
        let mut out: Vec<EditorAgent> = listed
            .into_iter()
            .filter(|a| valid_name(&a.name))
            .map(|a| EditorAgent {
                commands: commands_of(home, &a.name),
                display_name: a
                    .agent
                    .as_ref()
                    .ok()
                    .and_then(|d| d.display_name.as_ref().map(|t| t.to_string())),
                error: a.agent.err(),
                name: a.name,
            })
            .collect();
        // An agent with commands but no file runs with default settings: offer it too.
        if let Ok(entries) = std::fs::read_dir(agents::agents_dir(home)) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if e.path().is_dir() && valid_name(&name) && !out.iter().any(|a| a.name == name) {
                    let commands = commands_of(home, &name);
                    if !commands.is_empty() {
                        out.push(EditorAgent {
                            name,
                            display_name: None,
                            commands,
                            error: None,
                        });
                    }
                }
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(FlowEditorOptions {
            step_types: STEP_TYPES.iter().map(|s| (*s).to_owned()).collect(),
            agents: out,
        })
    }
}

/// Writes `path` through a hidden temporary file and a rename (a symlink
/// at `path` is replaced, never written through).
fn write_atomically(path: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| CoreError::Corrupt(format!("{} has no folder", path.display())))?;
    std::fs::create_dir_all(dir)
        .map_err(|e| CoreError::io(format!("cannot create {}", dir.display()), e))?;
    // Not `.json`: a half-written file is never listed or loaded.
    let tmp = dir.join(format!(".{name}.json.editor.tmp"));
    std::fs::write(&tmp, bytes)
        .map_err(|e| CoreError::io(format!("cannot write {}", tmp.display()), e))?;
    std::fs::rename(&tmp, path)
        .map_err(|e| CoreError::io(format!("cannot write {}", path.display()), e))
}

/// The UI's types of this module (for `ts_export`).
#[cfg(test)]
pub(super) fn export_ts(dir: &Path) -> std::result::Result<(), ts_rs::ExportError> {
    FlowSource::export_all_to(dir)?;
    FlowDraft::export_all_to(dir)?;
    FlowSave::export_all_to(dir)?;
    FlowSaved::export_all_to(dir)?;
    FlowEditorOptions::export_all_to(dir)?;
    Ok(())
}
