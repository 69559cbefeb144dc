//! What the flow engine reads from the data folder, re-read on every call (no
//! cache, no watcher): flow files (`flows/<name>.json`), agents
//! (`agents/<name>.json`: `{provider?, model?, prompt?}`) and agent commands
//! (`agents/<name>/commands/<command>.json`: `{description?, messages}`).
//!
//! Names are file stems of letters, digits, `-` and `_` only, so a name can
//! never leave its folder. A missing folder is an empty list; files that are
//! not `.json` (and hidden ones) are ignored; a `.json` file whose name is
//! refused is listed disabled with the reason and how to rename it, so it
//! never silently vanishes. Agent files are also written and removed here
//! (the Agents API), through a temporary file.

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
    /// The parsed flow, or why it is disabled (for a file whose name is
    /// refused, the error's `path` is the file, e.g. `flows/my flow.json`).
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

/// A `.json` file found in a folder: its name, or why that name is refused.
struct Found {
    /// The file stem (lossy when it is not UTF-8).
    name: String,
    /// The file.
    path: PathBuf,
    /// Why the name cannot be used, as `(file, reason)`: the file is
    /// listed disabled with it.
    refused: Option<(String, String)>,
}

/// `name` with every refused character replaced, as a suggestion.
fn suggested_name(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(128)
        .collect();
    if s.trim_matches('_').is_empty() {
        "renamed".to_owned()
    } else {
        s
    }
}

/// The `*.json` files of `dir` (`folder` is how messages name it), sorted by
/// name. A file whose name the loader refuses is kept with the reason, so a
/// list shows it disabled instead of hiding it; hidden files and other
/// extensions are skipped.
fn json_files(dir: &Path, what: &'static str, folder: &str) -> Result<Vec<Found>, LoadError> {
    let entries = match std::fs::read_dir(dir) {
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
        let file = entry.file_name().to_string_lossy().into_owned();
        let Some((stem, ext)) = file.rsplit_once('.') else {
            continue;
        };
        if !ext.eq_ignore_ascii_case("json") || file.starts_with('.') || !path.is_file() {
            continue;
        }
        let reason = if ext != "json" {
            Some(format!(
                "the file is not used: its extension must be .json in lower case (rename it to {stem}.json)"
            ))
        } else if !valid_name(stem) {
            Some(format!(
                "the file is not used: {} {what} name may only use letters, digits, - and _ (at most 128); rename it, e.g. to {}.json",
                if what.starts_with(['a', 'e', 'i', 'o', 'u']) {
                    "an"
                } else {
                    "a"
                },
                suggested_name(stem)
            ))
        } else {
            None
        };
        let refused = reason.map(|r| (format!("{folder}/{file}"), r));
        out.push(Found {
            name: stem.to_owned(),
            path,
            refused,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Every `flows/*.json`, sorted by name; invalid ones, and files whose name
/// is refused, carry their error.
pub fn list_flows(home: &Path) -> Result<Vec<FlowEntry>, LoadError> {
    let known = known_agents(home);
    let mut out = Vec::new();
    for found in json_files(&flows_dir(home), "flow", "flows")? {
        let flow = match found.refused {
            Some((file, message)) => Err(DefinitionError {
                path: file,
                message,
            }),
            None => match std::fs::read_to_string(&found.path) {
                Ok(text) => definition::parse(&text)
                    .and_then(|def| crate::known_agents::check_agents(&def, &known).map(|()| def)),
                Err(e) => Err(DefinitionError {
                    path: "$".into(),
                    message: format!("cannot read the file: {e}"),
                }),
            },
        };
        let description = flow
            .as_ref()
            .ok()
            .and_then(|f| f.description.clone())
            .unwrap_or_default()
            .trim()
            .to_owned();
        out.push(FlowEntry {
            name: found.name,
            description,
            flow,
        });
    }
    Ok(out)
}

/// Every agent name Maskflow knows now (built-ins, agent files, agents with commands).
pub fn known_agents(home: &Path) -> std::collections::BTreeSet<String> {
    let mut out: std::collections::BTreeSet<String> = crate::known_agents::BUILT_IN_AGENTS
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    if let Ok(entries) = std::fs::read_dir(agents_dir(home)) {
        for e in entries.flatten() {
            let file = e.file_name().to_string_lossy().into_owned();
            let path = e.path();
            if let Some(stem) = file.strip_suffix(".json")
                && valid_name(stem)
                && path.is_file()
            {
                out.insert(stem.to_owned());
            } else if valid_name(&file) && path.join("commands").is_dir() {
                out.insert(file);
            }
        }
    }
    out
}

/// [`crate::known_agents::check_agents`] against the agents of `home` now.
pub fn check_flow_agents(home: &Path, def: &FlowDef) -> Result<(), DefinitionError> {
    crate::known_agents::check_agents(def, &known_agents(home))
}

/// Reads and validates `flows/<name>.json`.
pub fn load_flow(home: &Path, name: &str) -> Result<FlowDef, LoadError> {
    let def = load_flow_shape(home, name)?;
    check_flow_agents(home, &def).map_err(|error| LoadError::Invalid {
        file: format!("flows/{name}.json"),
        error,
    })?;
    Ok(def)
}

/// A flow as written, checked on its own but not against the agents on
/// disk: what its diagram shows while an agent it names is still missing.
pub fn load_flow_shape(home: &Path, name: &str) -> Result<FlowDef, LoadError> {
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

/// One file of the agent list.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentEntry {
    /// The file stem.
    pub name: String,
    /// The agent's settings, or why the file cannot be used.
    pub agent: Result<AgentDef, String>,
}

/// `<home>/agents`
pub fn agents_dir(home: &Path) -> PathBuf {
    home.join("agents")
}

/// `agents/<name>.json` under `home` (the name unchecked).
pub fn agent_path(home: &Path, name: &str) -> PathBuf {
    agents_dir(home).join(format!("{name}.json"))
}

/// Every `agents/*.json`, sorted by name; invalid ones, and files whose
/// name is refused, carry their error.
pub fn list_agents(home: &Path) -> Result<Vec<AgentEntry>, LoadError> {
    let mut out = Vec::new();
    for found in json_files(&agents_dir(home), "agent", "agents")? {
        let agent = match found.refused {
            Some((file, reason)) => Err(format!("{file}: {reason}")),
            None => load_agent(home, &found.name).map_err(|e| e.to_string()),
        };
        out.push(AgentEntry {
            name: found.name,
            agent,
        });
    }
    Ok(out)
}

/// Whether `agents/<name>.json` exists (a flow may only name an agent with
/// a file, commands or a built-in one: see [`crate::known_agents`]).
pub fn agent_file_exists(home: &Path, name: &str) -> bool {
    valid_name(name) && agent_path(home, name).is_file()
}

/// Writes `agents/<name>.json` through a temporary file, so that a run
/// starting meanwhile reads the old file or the new one, never half of it.
pub fn save_agent(home: &Path, name: &str, def: &AgentDef) -> crate::error::Result<()> {
    use crate::error::Error;
    check_name("agent", name).map_err(|e| Error::InvalidRequest(e.to_string()))?;
    let dir = agents_dir(home);
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    let text = serde_json::to_string_pretty(def).map_err(|e| Error::Corrupt(e.to_string()))?;
    let path = agent_path(home, name);
    // Not `.json`: a half-written file is never listed or loaded.
    let tmp = dir.join(format!(".{name}.json.tmp"));
    std::fs::write(&tmp, format!("{text}\n"))
        .map_err(|e| Error::io(format!("cannot write {}", tmp.display()), e))?;
    std::fs::rename(&tmp, &path)
        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
}

/// Removes `agents/<name>.json`; `false` when there was none. The agent's
/// commands (`agents/<name>/commands/`) stay.
pub fn delete_agent(home: &Path, name: &str) -> crate::error::Result<bool> {
    use crate::error::Error;
    check_name("agent", name).map_err(|e| Error::InvalidRequest(e.to_string()))?;
    let path = agent_path(home, name);
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io(format!("cannot remove {}", path.display()), e)),
    }
}

/// The agents a flow's steps name, nested steps included.
pub fn agents_of(def: &FlowDef) -> std::collections::BTreeSet<String> {
    def.all_steps()
        .into_iter()
        .filter_map(|s| s.agent().map(|(agent, _)| agent.to_string()))
        .collect()
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

    #[test]
    fn files_whose_names_are_refused_are_listed_disabled_with_the_reason() {
        let home = tempfile::tempdir().expect("tempdir");
        let dir = flows_dir(home.path());
        std::fs::create_dir_all(&dir).expect("mkdir");
        let gate = r#"{"steps":[{"type":"gate","prompt":"ok?","options":[{"label":"yes"}]}]}"#;
        for file in [
            "my flow.json",
            "Shout.JSON",
            "ok.json",
            ".hidden.json",
            "x.json.tmp",
        ] {
            std::fs::write(dir.join(file), gate).expect("write");
        }
        let list = list_flows(home.path()).expect("list");
        let shown: Vec<(&str, bool)> = list
            .iter()
            .map(|e| (e.name.as_str(), e.flow.is_err()))
            .collect();
        assert_eq!(shown, [("Shout", true), ("my flow", true), ("ok", false)]);
        let spaced = list[1].flow.as_ref().expect_err("refused").to_string();
        assert!(
            spaced.starts_with("flows/my flow.json: the file is not used"),
            "{spaced}"
        );
        assert!(spaced.contains("my_flow.json"), "{spaced}");
        let shout = list[0].flow.as_ref().expect_err("refused").to_string();
        assert!(shout.contains("Shout.json"), "{shout}");
    }

    #[test]
    fn agents_are_listed_saved_and_deleted() {
        let home = tempfile::tempdir().expect("tempdir");
        assert!(list_agents(home.path()).expect("none").is_empty());
        let def = AgentDef {
            display_name: Text::new("Code reviewer"),
            provider: Text::new("local"),
            model: Text::new("m1"),
            prompt: Text::new("You review code."),
        };
        save_agent(home.path(), "reviewer", &def).expect("save");
        assert!(agent_file_exists(home.path(), "reviewer"));
        assert_eq!(load_agent(home.path(), "reviewer").expect("load"), def);
        std::fs::write(agents_dir(home.path()).join("bad one.json"), "{}").expect("write");
        std::fs::write(agents_dir(home.path()).join("odd.json"), r#"{"colour":1}"#).expect("write");
        let list = list_agents(home.path()).expect("list");
        let names: Vec<&str> = list.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["bad one", "odd", "reviewer"]);
        assert!(
            list[0]
                .agent
                .as_ref()
                .expect_err("refused")
                .contains("bad_one.json")
        );
        assert!(
            list[1]
                .agent
                .as_ref()
                .expect_err("invalid")
                .contains("unknown field `colour`")
        );
        assert_eq!(list[2].agent, Ok(def));
        assert!(matches!(
            save_agent(home.path(), "../x", &AgentDef::default()),
            Err(crate::error::Error::InvalidRequest(_))
        ));
        assert!(delete_agent(home.path(), "reviewer").expect("delete"));
        assert!(!delete_agent(home.path(), "reviewer").expect("gone"));
        assert!(!agent_file_exists(home.path(), "reviewer"));
    }

    #[test]
    fn the_agents_a_flow_names_include_nested_steps() {
        let def = definition::parse(
            r#"{"steps":[{"type":"llm","agentType":"a","identifier":"i","messages":[{"role":"user","content":["x"]}]},
               {"type":"startLoop","maxIterations":2,"steps":[{"type":"break","agentType":"b","identifier":"i","question":"done?","breakOn":"yes"}]}]}"#,
        )
        .expect("flow");
        assert_eq!(agents_of(&def).into_iter().collect::<Vec<_>>(), ["a", "b"]);
    }

    #[test]
    fn agent_files_command_folders_and_built_ins_are_known() {
        let home = tempfile::tempdir().expect("tmp");
        let dir = home.path().join("agents");
        std::fs::create_dir_all(dir.join("reveiwer").join("commands")).expect("mkdir");
        std::fs::write(dir.join("coder.json"), "{}").expect("write");
        std::fs::write(dir.join("bad name.json"), "{}").expect("write");
        let known = known_agents(home.path());
        assert_eq!(
            known.iter().map(String::as_str).collect::<Vec<_>>(),
            ["assistant", "coder", "reveiwer"]
        );
    }
}
