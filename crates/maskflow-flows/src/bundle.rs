//! Seed 003's export/import format: one JSON file with a flow (its definition
//! and Mermaid source) and the agents and agent commands it uses, versioned by
//! `exportVersion`, plus the file I/O of writing an imported flow into the
//! data folder. A name clash (the flow, or an agent whose file differs) is
//! refused unless the caller says to overwrite.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::agents::{self, AgentCommand, AgentDef};
use super::definition::{self, FlowDef, Step, Text};
use super::engine::{FlowEngine, load_error};
use super::{FlowSummary, mermaid};
use crate::error::{Error, Result};

/// The bundle version this build writes (and the major version it reads).
pub const EXPORT_VERSION: &str = "2.0";

/// `GET /api/flows/{name}/export`: a flow with its agents.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct FlowBundle {
    /// The flow.
    pub workflow: BundledFlow,
    /// The agents its steps name (those with a file), with their commands.
    #[serde(default)]
    pub agents: Vec<BundledAgent>,
    /// `2.0`.
    pub export_version: String,
    /// RFC 3339.
    pub exported_at: String,
}

/// The flow of a bundle.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct BundledFlow {
    /// The file stem.
    pub name: String,
    /// The description.
    #[serde(default)]
    pub description: String,
    /// The flow as Mermaid with its config block.
    #[serde(default)]
    pub mermaid_source: String,
    /// The flow file's JSON (read first; `mermaidSource` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub definition: Option<Value>,
    /// Seed 003's steps parsed out of `mermaidSource` (configs of nodes the
    /// block leaves out; the flow itself when the diagram cannot be read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Vec<Object>>))]
    #[cfg_attr(feature = "ts", ts(optional, type = "Array<unknown>"))]
    pub steps: Option<Vec<Value>>,
}

/// An agent of a bundle: `agents/<id>.json` and its commands.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct BundledAgent {
    /// The agent's name.
    pub id: String,
    /// The agent file's JSON (absent in seed 003's `{id, displayName, agentPrompt}`).
    #[serde(default, skip_serializing_if = "Value::is_null")]
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub agent: Value,
    /// Seed 003: the agent's name for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub display_name: Option<String>,
    /// Seed 003: the agent's persona prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub agent_prompt: Option<String>,
    /// Command name → the command file's JSON (absent when it has none).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    #[cfg_attr(feature = "ts", ts(type = "Record<string, unknown> | undefined"))]
    pub commands: BTreeMap<String, Value>,
}

/// `POST /api/flows/import`: a bundle or a Mermaid text.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "ts", ts(rename = "FlowImport"))]
pub struct ImportRequest {
    /// A bundle (as exported).
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub bundle: Option<FlowBundle>,
    /// A Mermaid diagram with its config block.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub mermaid: Option<String>,
    /// A flow file's JSON (seed 004's `flows/<name>.json`), as written.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    #[cfg_attr(feature = "ts", ts(optional, type = "unknown"))]
    pub flow: Option<Value>,
    /// The name to save it as (required for Mermaid and a flow; defaults to the bundle's).
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub name: Option<String>,
    /// Replace a flow (and agents) of the same name.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub overwrite: Option<bool>,
}

fn io(context: String) -> impl FnOnce(std::io::Error) -> Error {
    move |source| Error::Io { context, source }
}

fn to_json<T: Serialize>(v: &T) -> Result<String> {
    serde_json::to_string_pretty(v).map_err(|e| Error::Corrupt(e.to_string()))
}

fn write(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io(format!("cannot create {}", dir.display())))?;
    }
    std::fs::write(path, format!("{text}\n"))
        .map_err(io(format!("cannot write {}", path.display())))
}

fn bad(what: &str, e: impl std::fmt::Display) -> Error {
    Error::InvalidRequest(format!("{what}: {e}"))
}

/// A seed 003 workflow name ("PR Review Pipeline") as a file stem
/// (`pr-review-pipeline`); a valid stem is kept as it is.
pub fn file_stem_of(name: &str) -> String {
    if agents::valid_name(name) {
        return name.to_owned();
    }
    let mut out = String::new();
    for c in name.trim().chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').chars().take(128).collect()
}

/// The flow of a bundle: its `definition`, else its Mermaid source (with
/// seed 003's `steps` as configs), else, when the diagram cannot be read,
/// seed 003's `steps` alone, in the order listed.
pub fn bundled_definition(w: &BundledFlow) -> Result<FlowDef> {
    let mut def = match (&w.definition, &w.steps) {
        (Some(v), _) => definition::from_value(v).map_err(|e| bad("the bundled flow", e))?,
        (None, None) => {
            mermaid::import(&w.mermaid_source).map_err(|e| bad("the bundled Mermaid source", e))?
        }
        (None, Some(steps)) => {
            let mut configs = BTreeMap::new();
            for (i, s) in steps.iter().enumerate() {
                let id = s.get("id").and_then(Value::as_str).ok_or_else(|| {
                    bad(
                        "the bundled flow",
                        format!("workflow.steps[{i}].id: missing"),
                    )
                })?;
                configs.insert(id.to_owned(), s.clone());
            }
            if mermaid::readable(&w.mermaid_source) {
                mermaid::import_with(&w.mermaid_source, &configs)
                    .map_err(|e| bad("the bundled Mermaid source", e))?
            } else {
                // An abridged or missing diagram: the steps are the flow.
                definition::seed::flow_from_steps(steps, None)
                    .map_err(|e| bad("the bundled flow", format!("workflow.{e}")))?
            }
        }
    };
    if def.description.is_none() && !w.description.trim().is_empty() {
        def.description = Some(w.description.clone());
    }
    Ok(def)
}

/// A bundled agent: Maskflow's `agent` file, or seed 003's `displayName` and `agentPrompt`.
pub fn bundled_agent(a: &BundledAgent) -> Result<AgentDef> {
    let seed = a.display_name.is_some() || a.agent_prompt.is_some();
    match (&a.agent, seed) {
        (Value::Null, _) => Ok(AgentDef {
            display_name: a.display_name.as_deref().and_then(Text::new),
            prompt: a.agent_prompt.as_deref().and_then(Text::new),
            ..AgentDef::default()
        }),
        (_, true) => Err(Error::InvalidRequest(format!(
            "agent {}: give either agent or displayName/agentPrompt, not both",
            a.id
        ))),
        (v, false) => {
            serde_json::from_value(v.clone()).map_err(|e| bad(&format!("agent {}", a.id), e))
        }
    }
}

impl FlowEngine {
    /// A flow as Mermaid (seed 003's diagram and config block); drawn even
    /// while an agent it names is missing, so the page can show what to fix.
    pub fn mermaid(&self, name: &str) -> Result<String> {
        let def = agents::load_flow_shape(self.home(), name).map_err(load_error)?;
        Ok(mermaid::export(&def))
    }

    /// A flow with its agents, ready to import on another machine.
    pub fn export_bundle(&self, name: &str) -> Result<FlowBundle> {
        let def = self.load_definition(name)?;
        let mut agents: BTreeMap<String, BundledAgent> = BTreeMap::new();
        for step in def.all_steps() {
            let Some((agent, _)) = step.agent() else {
                continue;
            };
            let id = agent.to_string();
            let file = self.home().join("agents").join(format!("{id}.json"));
            if !agents.contains_key(&id) {
                let a = agents::load_agent(self.home(), &id).map_err(|e| bad("agent", e))?;
                if !file.exists() {
                    continue;
                }
                agents.insert(
                    id.clone(),
                    BundledAgent {
                        id: id.clone(),
                        agent: serde_json::to_value(a)
                            .map_err(|e| Error::Corrupt(e.to_string()))?,
                        commands: BTreeMap::new(),
                        display_name: None,
                        agent_prompt: None,
                    },
                );
            }
            if let Step::Command(c) = step
                && let Some(entry) = agents.get_mut(&id)
            {
                let cmd = agents::load_command(self.home(), &id, c.command_name.as_str())
                    .map_err(|e| bad("command", e))?;
                entry.commands.insert(
                    c.command_name.to_string(),
                    serde_json::to_value(cmd).map_err(|e| Error::Corrupt(e.to_string()))?,
                );
            }
        }
        Ok(FlowBundle {
            workflow: BundledFlow {
                name: name.to_owned(),
                description: def.description.clone().unwrap_or_default(),
                mermaid_source: mermaid::export(&def),
                definition: Some(
                    serde_json::to_value(&def).map_err(|e| Error::Corrupt(e.to_string()))?,
                ),
                steps: None,
            },
            agents: agents.into_values().collect(),
            export_version: EXPORT_VERSION.to_owned(),
            exported_at: self.now_rfc3339(),
        })
    }

    /// Writes an imported flow (and a bundle's agents) into the data folder.
    /// A clash is a `Conflict` unless `overwrite` is set.
    pub fn import_flow(&self, request: ImportRequest) -> Result<FlowSummary> {
        let overwrite = request.overwrite.unwrap_or(false);
        let named = |what: &str| {
            request
                .name
                .clone()
                .ok_or_else(|| Error::InvalidRequest(format!("name is required to import {what}")))
        };
        let (def, name, agents) = match (&request.bundle, &request.mermaid, &request.flow) {
            (None, None, None) => {
                return Err(Error::InvalidRequest(
                    "give a bundle, a mermaid text or a flow".into(),
                ));
            }
            (None, Some(text), None) => {
                let def = mermaid::import(text).map_err(|e| bad("the Mermaid diagram", e))?;
                (def, named("a Mermaid diagram")?, Vec::new())
            }
            (None, None, Some(v)) => {
                let def = definition::from_value(v).map_err(|e| bad("the flow", e))?;
                (def, named("a flow")?, Vec::new())
            }
            (Some(b), None, None) => {
                if !b.export_version.starts_with("2.") {
                    return Err(Error::InvalidRequest(format!(
                        "exportVersion {:?} is not supported (this version reads 2.x)",
                        b.export_version
                    )));
                }
                let def = bundled_definition(&b.workflow)?;
                let name = request
                    .name
                    .clone()
                    .unwrap_or_else(|| file_stem_of(&b.workflow.name));
                (def, name, b.agents.clone())
            }
            _ => {
                return Err(Error::InvalidRequest(
                    "give one of bundle, mermaid or flow, not several".into(),
                ));
            }
        };
        if !agents::valid_name(&name) {
            return Err(Error::InvalidRequest(format!(
                "flow name {name:?} may only use letters, digits, - and _"
            )));
        }
        let home = self.home();
        let flow_path = agents::flows_dir(home).join(format!("{name}.json"));
        let mut writes: Vec<(std::path::PathBuf, String)> =
            vec![(flow_path.clone(), to_json(&def)?)];
        let mut clashes = Vec::new();
        if flow_path.exists() {
            clashes.push(format!("flow {name}"));
        }
        for a in &agents {
            if !agents::valid_name(&a.id) {
                return Err(Error::InvalidRequest(format!(
                    "agent name {:?} is not valid",
                    a.id
                )));
            }
            let parsed = bundled_agent(a)?;
            let path = home.join("agents").join(format!("{}.json", a.id));
            let text = to_json(&parsed)?;
            if path.exists() && agents::load_agent(home, &a.id).ok().as_ref() != Some(&parsed) {
                clashes.push(format!("agent {}", a.id));
            }
            writes.push((path, text));
            for (cname, c) in &a.commands {
                if !agents::valid_name(cname) {
                    return Err(Error::InvalidRequest(format!(
                        "command name {cname:?} is not valid"
                    )));
                }
                let cmd: AgentCommand = serde_json::from_value(c.clone())
                    .map_err(|e| bad(&format!("command {cname}"), e))?;
                let path = home
                    .join("agents")
                    .join(&a.id)
                    .join("commands")
                    .join(format!("{cname}.json"));
                if path.exists()
                    && agents::load_command(home, &a.id, cname).ok().as_ref() != Some(&cmd)
                {
                    clashes.push(format!("command {}/{cname}", a.id));
                }
                writes.push((path, to_json(&cmd)?));
            }
        }
        if !clashes.is_empty() && !overwrite {
            return Err(Error::Conflict(format!(
                "{} already exist{}; import again with overwrite to replace {}",
                clashes.join(", "),
                if clashes.len() == 1 { "s" } else { "" },
                if clashes.len() == 1 { "it" } else { "them" },
            )));
        }
        for (path, text) in writes {
            write(&path, &text)?;
        }
        // Written either way (the user may add the agent next), but said.
        let agents_ok =
            agents::check_flow_agents(home, &def).map_err(|e| format!("flows/{name}.json: {e}"));
        Ok(FlowSummary {
            name,
            description: def.description.unwrap_or_default(),
            disabled: agents_ok.is_err(),
            error: agents_ok.err(),
        })
    }
}
