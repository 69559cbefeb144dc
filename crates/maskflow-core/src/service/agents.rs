//! Agents behind the facade (seed 003's personas, seed 004's agent files):
//! list, fetch by name, create, update and delete `agents/<name>.json`, one
//! method per call of the API. A request is checked as a whole and every
//! problem is named in one answer (unknown and mistyped fields, a missing or
//! refused name, a back end that is not configured), the way a flow file's
//! errors name their JSON path. An agent that a flow names cannot be
//! deleted: the refusal names the flows.
//!
//! The files are read on every call (no cache), like flows; writes go
//! through a temporary file so a run starting meanwhile never reads half.

use std::collections::BTreeMap;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;
use utoipa::ToSchema;

use super::Service;
use super::deletes::DeleteReply;
use crate::error::{CoreError, Result};
use crate::settings;
use crate::store::deletes::DeleteCounts;
use maskflow_flows::agents::{self as files, AgentDef};
use maskflow_flows::definition::Text;
use maskflow_llm::config::{ProviderConfig, ProviderKind};

/// Longest persona prompt, in characters.
pub const MAX_AGENT_PROMPT_CHARS: usize = 50_000;
/// Longest model name, in characters.
pub const MAX_MODEL_CHARS: usize = 200;

/// One agent as the API shows it.
#[derive(Serialize, Clone, Debug, PartialEq, ToSchema, TS)]
#[serde(rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct AgentView {
    /// The agent's name: its file stem, what flow steps name in `agentType`.
    pub name: String,
    /// Its name for people (seed 003's `displayName`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// The persona layer of every prompt of this agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// The configured back end it uses (absent: the flow agents' default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The model (absent: the back end's own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The flows whose steps name this agent, sorted.
    pub used_by: Vec<String>,
    /// The file cannot be used (its name is refused or its content invalid).
    pub disabled: bool,
    /// Why, when disabled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What will go wrong when it runs, e.g. a back end removed in Settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// `GET /api/agents`.
#[derive(Serialize, Clone, Debug, PartialEq, ToSchema, TS)]
pub struct AgentList {
    /// Sorted by name.
    pub agents: Vec<AgentView>,
}

/// An agent to create (`name` required) or the new settings of one (`name`
/// absent or the same: agents are not renamed). Absent fields are unset.
/// Every problem of a request is reported at once, so the body is read
/// leniently here and checked by the service.
#[derive(Serialize, Clone, Debug, Default, PartialEq, ToSchema, TS)]
#[ts(optional_fields)]
pub struct AgentInput {
    /// The agent's name: letters, digits, `-` and `_`.
    pub name: Option<String>,
    /// Its name for people (seed 003's `displayName`).
    #[serde(rename = "displayName")]
    pub display_name: Option<String>,
    /// The persona prompt.
    pub prompt: Option<String>,
    /// A configured back end's id.
    pub provider: Option<String>,
    /// The model to ask (absent: the back end's own).
    pub model: Option<String>,
    /// What was wrong with the body's shape (unknown or mistyped fields).
    #[serde(skip)]
    shape: Vec<String>,
}

const FIELDS: &str = "name, displayName, prompt, provider, model";

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

impl<'de> Deserialize<'de> for AgentInput {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let Value::Object(map) = Value::deserialize(d)? else {
            return Err(de::Error::custom(
                "an agent must be a JSON object ({name, prompt, provider, model})",
            ));
        };
        let mut input = AgentInput::default();
        for (key, value) in map {
            let slot = match key.as_str() {
                "name" => &mut input.name,
                "displayName" => &mut input.display_name,
                "prompt" => &mut input.prompt,
                "provider" => &mut input.provider,
                "model" => &mut input.model,
                _ => {
                    input
                        .shape
                        .push(format!("{key}: unknown field; expected one of {FIELDS}"));
                    continue;
                }
            };
            match value {
                Value::Null => {}
                Value::String(s) => *slot = Some(s),
                other => input.shape.push(format!(
                    "{key}: must be a string (it is {})",
                    json_kind(&other)
                )),
            }
        }
        Ok(input)
    }
}

fn name_problem(name: &str) -> Option<String> {
    (!files::valid_name(name))
        .then(|| format!("name: {name:?} may only use letters, digits, - and _ (1 to 128 of them)"))
}

/// Checks a request against the configured back ends: the agent's name
/// and settings, or every problem found. `existing` is the name in the path
/// of an update.
fn check(
    input: &AgentInput,
    existing: Option<&str>,
    providers: &[ProviderConfig],
) -> std::result::Result<(String, AgentDef), Vec<String>> {
    let mut problems = input.shape.clone();
    let given = input.name.as_deref().map(str::trim);
    let name = match (existing, given) {
        (Some(path), None) => path.to_owned(),
        (Some(path), Some(n)) if n == path => path.to_owned(),
        (Some(path), Some(n)) => {
            problems.push(format!(
                "name: agents are not renamed (this one is {path:?}, the body says {n:?}); create a new agent and point the flows at it"
            ));
            path.to_owned()
        }
        (None, None) | (None, Some("")) => {
            problems.push("name: missing; every agent needs a name".to_owned());
            String::new()
        }
        (None, Some(n)) => {
            problems.extend(name_problem(n));
            n.to_owned()
        }
    };
    let prompt = input.prompt.as_deref().and_then(Text::new);
    if let Some(p) = &prompt
        && p.as_str().chars().count() > MAX_AGENT_PROMPT_CHARS
    {
        problems.push(format!(
            "prompt: longer than {MAX_AGENT_PROMPT_CHARS} characters"
        ));
    }
    let provider = input.provider.as_deref().and_then(Text::new);
    let config = provider.as_ref().and_then(|p| {
        let found = providers.iter().find(|c| c.id == p.as_str());
        if found.is_none() {
            problems.push(format!(
                "provider: {:?} is not a configured back end (configured: {}); add it in Settings first",
                p.as_str(),
                configured(providers)
            ));
        }
        found
    });
    let model = input.model.as_deref().and_then(Text::new);
    if let Some(m) = &model {
        if m.as_str().chars().count() > MAX_MODEL_CHARS {
            problems.push(format!("model: longer than {MAX_MODEL_CHARS} characters"));
        } else if m.as_str().chars().any(char::is_control) {
            problems.push("model: must not hold control characters".to_owned());
        }
        if config.is_some_and(|c| c.kind == ProviderKind::Manual) {
            problems.push(format!(
                "model: the manual back end {:?} takes no model (you paste the answers)",
                config.map(|c| c.id.as_str()).unwrap_or_default()
            ));
        }
    }
    if problems.is_empty() {
        Ok((
            name,
            AgentDef {
                display_name: input.display_name.as_deref().and_then(Text::new),
                provider,
                model,
                prompt,
            },
        ))
    } else {
        Err(problems)
    }
}

fn configured(providers: &[ProviderConfig]) -> String {
    let ids: Vec<&str> = providers.iter().map(|p| p.id.as_str()).collect();
    if ids.is_empty() {
        "none".to_owned()
    } else {
        ids.join(", ")
    }
}

/// One line per problem, each `field: what is wrong` (the UI shows each
/// under its field).
fn invalid(problems: Vec<String>) -> CoreError {
    CoreError::InvalidRequest(format!(
        "the agent is not valid:\n- {}",
        problems.join("\n- ")
    ))
}

fn text(t: &Option<Text>) -> Option<String> {
    t.as_ref().map(|t| t.as_str().to_owned())
}

/// The view of one agent file.
fn view(
    name: String,
    agent: std::result::Result<AgentDef, String>,
    used: &BTreeMap<String, Vec<String>>,
    providers: &[ProviderConfig],
) -> AgentView {
    let used_by = used.get(&name).cloned().unwrap_or_default();
    match agent {
        Ok(def) => {
            let warning = def.provider.as_ref().and_then(|p| {
                (!providers.iter().any(|c| c.id == p.as_str())).then(|| {
                    format!(
                        "back end {:?} is not configured any more (configured: {}); its runs fail until you pick another",
                        p.as_str(),
                        configured(providers)
                    )
                })
            });
            AgentView {
                name,
                display_name: text(&def.display_name),
                prompt: text(&def.prompt),
                provider: text(&def.provider),
                model: text(&def.model),
                used_by,
                disabled: false,
                error: None,
                warning,
            }
        }
        Err(error) => AgentView {
            name,
            display_name: None,
            prompt: None,
            provider: None,
            model: None,
            used_by,
            disabled: true,
            error: Some(error),
            warning: None,
        },
    }
}

impl Service {
    /// Agent name → the flows (valid ones, sorted) whose steps name it.
    fn agent_users(&self) -> Result<BTreeMap<String, Vec<String>>> {
        let flows =
            files::list_flows(self.home()).map_err(|e| CoreError::InvalidRequest(e.to_string()))?;
        let mut used: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for entry in flows {
            if let Ok(def) = &entry.flow {
                for agent in files::agents_of(def) {
                    used.entry(agent).or_default().push(entry.name.clone());
                }
            }
        }
        Ok(used)
    }

    fn configured_providers(&self) -> Result<Vec<ProviderConfig>> {
        Ok(settings::load(&self.db())?.providers)
    }

    /// A path's agent name, refused (400) when it cannot name a file.
    fn agent_name(name: &str) -> Result<()> {
        match name_problem(name) {
            Some(p) => Err(CoreError::InvalidRequest(format!("agent {p}"))),
            None => Ok(()),
        }
    }

    /// Every agent in `agents/` (re-read now) with the flows that use it;
    /// invalid files and files whose name is refused are disabled.
    pub fn agent_list(&self) -> Result<AgentList> {
        let entries = files::list_agents(self.home())
            .map_err(|e| CoreError::InvalidRequest(e.to_string()))?;
        let used = self.agent_users()?;
        let providers = self.configured_providers()?;
        Ok(AgentList {
            agents: entries
                .into_iter()
                .map(|e| view(e.name, e.agent, &used, &providers))
                .collect(),
        })
    }

    /// One agent by name (seed 003's "fetch agent by id").
    pub fn agent_get(&self, name: &str) -> Result<AgentView> {
        Self::agent_name(name)?;
        if !files::agent_file_exists(self.home(), name) {
            return Err(CoreError::not_found("agent", name));
        }
        let agent = files::load_agent(self.home(), name).map_err(|e| e.to_string());
        Ok(view(
            name.to_owned(),
            agent,
            &self.agent_users()?,
            &self.configured_providers()?,
        ))
    }

    /// Creates `agents/<name>.json`; a name in use is a conflict.
    pub fn agent_create(&self, input: AgentInput) -> Result<AgentView> {
        let (name, def) = check(&input, None, &self.configured_providers()?).map_err(invalid)?;
        {
            let _one = super::lock(&self.inner.agent_writes);
            if files::agent_file_exists(self.home(), &name) {
                return Err(CoreError::Conflict(format!(
                    "an agent named {name:?} exists already; edit it or pick another name"
                )));
            }
            files::save_agent(self.home(), &name, &def)?;
        }
        self.agent_get(&name)
    }

    /// Replaces an agent's settings (its prompt, back end and model).
    pub fn agent_update(&self, name: &str, input: AgentInput) -> Result<AgentView> {
        Self::agent_name(name)?;
        let (name, def) =
            check(&input, Some(name), &self.configured_providers()?).map_err(invalid)?;
        {
            let _one = super::lock(&self.inner.agent_writes);
            if !files::agent_file_exists(self.home(), &name) {
                return Err(CoreError::not_found("agent", &name));
            }
            files::save_agent(self.home(), &name, &def)?;
        }
        self.agent_get(&name)
    }

    /// Deletes `agents/<name>.json` in two steps like a workflow (see
    /// `service::deletes`): without `confirm` nothing is deleted and the
    /// answer holds a token; refused (409) while a flow names the agent. Its
    /// commands folder stays.
    pub fn agent_delete(&self, name: &str, confirm: Option<&str>) -> Result<DeleteReply> {
        Self::agent_name(name)?;
        let _one = super::lock(&self.inner.agent_writes);
        if !files::agent_file_exists(self.home(), name) {
            return Err(CoreError::not_found("agent", name));
        }
        if let Some(flows) = self.agent_users()?.get(name) {
            return Err(CoreError::Conflict(format!(
                "agent {name:?} is used by flow{} {}; change {} to another agent first",
                if flows.len() == 1 { "" } else { "s" },
                flows.join(", "),
                if flows.len() == 1 { "it" } else { "them" },
            )));
        }
        // The file's size is in the counts: an agent edited since the
        // confirmation is confirmed again.
        let path = files::agent_path(self.home(), name);
        let bytes = std::fs::metadata(&path)
            .map_err(|e| CoreError::io(format!("reading {}", path.display()), e))?
            .len();
        let counts = DeleteCounts {
            agents: 1,
            bytes: i64::try_from(bytes).unwrap_or(i64::MAX),
            ..DeleteCounts::default()
        };
        if let Some(preview) = self.check_confirmation(&format!("agent:{name}"), counts, confirm) {
            return Ok(preview);
        }
        files::delete_agent(self.home(), name)?;
        Ok(DeleteReply {
            deleted: true,
            would_delete: counts,
            confirm_token: None,
            expires_at: None,
            message: format!("deleted agent {name}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn providers() -> Vec<ProviderConfig> {
        let mut local = ProviderConfig::manual();
        local.id = "local".into();
        local.kind = ProviderKind::Openai;
        local.model = Some("m1".into());
        vec![ProviderConfig::manual(), local]
    }

    fn parse(body: &str) -> AgentInput {
        serde_json::from_str(body).expect("an object")
    }

    #[test]
    fn a_request_is_checked_whole_and_every_problem_is_named() {
        let input = parse(r#"{"name":"bad name","colour":"red","prompt":5,"provider":"nope"}"#);
        let problems = check(&input, None, &providers()).expect_err("problems");
        assert_eq!(problems.len(), 4, "{problems:?}");
        let all = problems.join("\n");
        for needle in [
            "colour: unknown field",
            "prompt: must be a string (it is a number)",
            "name: \"bad name\" may only use",
            "provider: \"nope\" is not a configured back end (configured: manual, local)",
        ] {
            assert!(all.contains(needle), "{needle} in {all}");
        }
        let missing = check(&parse("{}"), None, &providers()).expect_err("no name");
        assert_eq!(missing, ["name: missing; every agent needs a name"]);
        let manual = parse(r#"{"name":"a","provider":"manual","model":"gpt"}"#);
        assert!(
            check(&manual, None, &providers()).expect_err("manual")[0].contains("takes no model")
        );
        let renamed = parse(r#"{"name":"b"}"#);
        assert!(
            check(&renamed, Some("a"), &providers()).expect_err("rename")[0]
                .contains("not renamed")
        );
        assert!(serde_json::from_str::<AgentInput>("[1]").is_err());
    }

    #[test]
    fn a_good_request_becomes_the_agent_file_trimmed() {
        let input = parse(
            r#"{"name":"reviewer","prompt":"  You review.  ","provider":"local","model":" m2 ","colour":null}"#,
        );
        let problems = check(&input, None, &providers());
        assert!(
            problems.is_err(),
            "an unknown field is a problem even when null"
        );
        let input = parse(
            r#"{"name":"reviewer","prompt":"  You review.  ","provider":"local","model":" m2 "}"#,
        );
        let (name, def) = check(&input, None, &providers()).expect("valid");
        assert_eq!(name, "reviewer");
        assert_eq!(
            (text(&def.prompt), text(&def.provider), text(&def.model)),
            (
                Some("You review.".into()),
                Some("local".into()),
                Some("m2".into())
            )
        );
        let (_, bare) = check(
            &parse(r#"{"prompt":"","provider":null}"#),
            Some("x"),
            &providers(),
        )
        .expect("update");
        assert_eq!(bare, AgentDef::default());
    }
}
