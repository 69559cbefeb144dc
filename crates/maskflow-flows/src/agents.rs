//! What the flow engine reads from the data folder, re-read on every call (no
//! cache, no watcher): flow files (`flows/<name>.json`), agents
//! (`agents/<name>.json`: `{provider?, model?, prompt?}`) and agent commands
//! (`agents/<name>/commands/<command>.json`: `{description?, messages}`).
//!
//! Names are file stems of letters, digits, `-` and `_` only, so a name can
//! never leave its folder. A missing folder is an empty list; files that are
//! not `.json` are ignored.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::definition::{self, DefinitionError, FlowDef, MessageDef, Text};

/// An agent's settings.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentDef {
    /// The LLM back end's name (default: the flow agents' default back end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<Text>,
    /// The model (default: the back end's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<Text>,
    /// The persona layer of every prompt of this agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<Text>,
    /// The agent's name for people (seed 003's `displayName`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<Text>,
}

/// An agent command.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentCommand {
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<Text>,
    /// The messages it sends.
    pub messages: Vec<MessageDef>,
}

/// Why a file could not be used.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoadError {
    /// The name has characters other than letters, digits, `-` and `_`.
    #[error("{what} name {name:?} may only use letters, digits, - and _")]
    BadName {
        /// "flow", "agent" or "command".
        what: &'static str,
        /// The name given.
        name: String,
    },
    /// No such file.
    #[error("{what} {name:?} does not exist ({path})")]
    Missing {
        /// "flow", "agent" or "command".
        what: &'static str,
        /// The name.
        name: String,
        /// Where it was looked for.
        path: String,
    },
    /// The file could not be read.
    #[error("cannot read {path}: {message}")]
    Unreadable {
        /// The file.
        path: String,
        /// The OS error.
        message: String,
    },
    /// The file is not valid.
    #[error("{file}: {error}")]
    Invalid {
        /// The file name.
        file: String,
        /// What is wrong, where.
        error: DefinitionError,
    },
}

/// One entry of the flow list.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowEntry {
    /// The file stem.
    pub name: String,
    /// The description ("" when missing or invalid).
    pub description: String,
    /// The parsed flow, or why it is disabled.
    pub flow: Result<FlowDef, DefinitionError>,
}

/// Whether `name` is a safe file stem.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn check_name(what: &'static str, name: &str) -> Result<(), LoadError> {
    if valid_name(name) {
        Ok(())
    } else {
        Err(LoadError::BadName {
            what,
            name: name.to_owned(),
        })
    }
}

fn read(what: &'static str, name: &str, path: &Path) -> Result<String, LoadError> {
    std::fs::read_to_string(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            LoadError::Missing {
                what,
                name: name.to_owned(),
                path: path.display().to_string(),
            }
        } else {
            LoadError::Unreadable {
                path: path.display().to_string(),
                message: e.to_string(),
            }
        }
    })
}

/// `<home>/flows`
pub fn flows_dir(home: &Path) -> PathBuf {
    home.join("flows")
}

/// Every `flows/*.json`, sorted by name; invalid ones carry their error.
pub fn list_flows(home: &Path) -> Result<Vec<FlowEntry>, LoadError> {
    let dir = flows_dir(home);
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(LoadError::Unreadable {
                path: dir.display().to_string(),
                message: e.to_string(),
            });
        }
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") || !path.is_file() {
            continue;
        }
        let Some(name) = path
            .file_stem()
            .and_then(|s| s.to_str())
            .filter(|n| valid_name(n))
        else {
            continue;
        };
        let flow = match std::fs::read_to_string(&path) {
            Ok(text) => definition::parse(&text),
            Err(e) => Err(DefinitionError {
                path: "$".into(),
                message: format!("cannot read the file: {e}"),
            }),
        };
        let description = flow
            .as_ref()
            .ok()
            .and_then(|f| f.description.clone())
            .unwrap_or_default()
            .trim()
            .to_owned();
        out.push(FlowEntry {
            name: name.to_owned(),
            description,
            flow,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Reads and validates `flows/<name>.json`.
pub fn load_flow(home: &Path, name: &str) -> Result<FlowDef, LoadError> {
    check_name("flow", name)?;
    let path = flows_dir(home).join(format!("{name}.json"));
    let text = read("flow", name, &path)?;
    definition::parse(&text).map_err(|error| LoadError::Invalid {
        file: format!("flows/{name}.json"),
        error,
    })
}

fn strict<T: serde::de::DeserializeOwned>(file: String, text: &str) -> Result<T, LoadError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let v = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let message = e.into_inner().to_string();
        let message = match message.rfind(" at line ") {
            Some(i) => message[..i].to_owned(),
            None => message,
        };
        LoadError::Invalid {
            file: file.clone(),
            error: DefinitionError {
                path: if path == "." { "$".into() } else { path },
                message,
            },
        }
    })?;
    de.end().map_err(|e| LoadError::Invalid {
        file,
        error: DefinitionError {
            path: "$".into(),
            message: format!("not valid JSON: {e}"),
        },
    })?;
    Ok(v)
}

/// Reads `agents/<name>.json`; an agent without a file has default settings.
pub fn load_agent(home: &Path, name: &str) -> Result<AgentDef, LoadError> {
    check_name("agent", name)?;
    let path = home.join("agents").join(format!("{name}.json"));
    match read("agent", name, &path) {
        Ok(text) => strict(format!("agents/{name}.json"), &text),
        Err(LoadError::Missing { .. }) => Ok(AgentDef::default()),
        Err(e) => Err(e),
    }
}

/// Reads `agents/<agent>/commands/<command>.json`.
pub fn load_command(home: &Path, agent: &str, command: &str) -> Result<AgentCommand, LoadError> {
    check_name("agent", agent)?;
    check_name("command", command)?;
    let file = format!("agents/{agent}/commands/{command}.json");
    let text = read("command", command, &home.join(&file))?;
    let cmd: AgentCommand = strict(file.clone(), &text)?;
    if cmd.messages.is_empty() {
        return Err(LoadError::Invalid {
            file,
            error: DefinitionError {
                path: "messages".into(),
                message: "must list at least one message".into(),
            },
        });
    }
    Ok(cmd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_folder_is_read_each_time_and_bad_files_are_listed_disabled() {
        let home = tempfile::tempdir().expect("tempdir");
        assert!(list_flows(home.path()).expect("missing folder").is_empty());
        let dir = flows_dir(home.path());
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join("notes.txt"), "ignored").expect("write");
        std::fs::write(dir.join("good.json"), r#"{"description":" Does it ","steps":[{"type":"gate","prompt":"ok?","options":[{"label":"yes"}]}]}"#).expect("write");
        std::fs::write(
            dir.join("bad.json"),
            r#"{"steps":[{"type":"startLoop","steps":[]}]}"#,
        )
        .expect("write");
        let list = list_flows(home.path()).expect("list");
        assert_eq!(
            list.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(),
            ["bad", "good"]
        );
        assert_eq!(list[1].description, "Does it");
        assert_eq!(
            list[0].flow.as_ref().expect_err("bad").path,
            "steps[0].steps"
        );
        assert!(matches!(
            load_flow(home.path(), "nope"),
            Err(LoadError::Missing { .. })
        ));
        assert!(matches!(
            load_flow(home.path(), "../x"),
            Err(LoadError::BadName { .. })
        ));
        assert_eq!(
            load_agent(home.path(), "ghost").expect("default"),
            AgentDef::default()
        );
        std::fs::create_dir_all(home.path().join("agents/a/commands")).expect("mkdir");
        std::fs::write(
            home.path().join("agents/a.json"),
            r#"{"prompt":"p","colour":1}"#,
        )
        .expect("write");
        let e = load_agent(home.path(), "a").expect_err("unknown key");
        assert!(e.to_string().contains("unknown field `colour`"), "{e}");
        std::fs::write(
            home.path().join("agents/a/commands/c.json"),
            r#"{"messages":[{"role":"user","content":["x"]}]}"#,
        )
        .expect("write");
        assert_eq!(
            load_command(home.path(), "a", "c")
                .expect("command")
                .messages
                .len(),
            1
        );
        assert!(matches!(
            load_command(home.path(), "a", "d"),
            Err(LoadError::Missing { .. })
        ));
    }
}
