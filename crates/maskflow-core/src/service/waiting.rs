//! What waits for a person right now, as one list: flow runs at a gate or
//! needing attention (an escalation, or retries that were due when the run
//! stopped), builds stopped at a gate and the manual back end's prompts. The sidebar's badge counts
//! it and the notifications link into it; it owns no state of its own and
//! reads what the flows and the manual prompts already store.

use std::collections::HashMap;

use serde::Serialize;
use ts_rs::TS;
use utoipa::ToSchema;

use super::Service;
use crate::error::Result;
use crate::store;
use maskflow_flows::store as flow_store;
use maskflow_llm::call::ManualWaiter;
use maskflow_llm::manual::ManualPrompt;

/// How deep a chain of subflows is followed to the run the user opens.
const MAX_PARENTS: usize = 16;

/// Why an item waits.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq, ToSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum WaitingKind {
    /// A flow run waits at a human gate.
    Gate,
    /// A flow run needs attention: retry, skip or stop.
    Attention,
    /// A manual prompt waits for a pasted answer.
    ManualPrompt,
    /// A workflow's build waits at a gate (plan, review, packages, files).
    BuildGate,
}

/// One thing that waits for a person.
#[derive(Serialize, Clone, Debug, PartialEq, Eq, ToSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct WaitingItem {
    /// The flow run's id (`flow_…`), the prompt's (`mp_…`) or the version's (`wv_…`).
    pub id: String,
    /// Why it waits.
    pub kind: WaitingKind,
    /// The run's title, who asks for the prompt (`builder`, `agent:<name>`),
    /// or the workflow's name (empty when it has none).
    pub title: String,
    /// The flow whose run waits (a prompt's, when a flow run asked it).
    #[ts(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow_name: Option<String>,
    /// The top-level run to open (a subflow's prompt opens its top run).
    #[ts(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The workflow a prompt or a build is for.
    #[ts(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<String>,
    /// When it began to wait, as far as is stored (RFC 3339): the run's last
    /// turn, or the prompt's creation. A new gate of the same run has a new one.
    pub since: String,
}

/// `GET /api/waiting`: everything waiting for a person, oldest first.
#[derive(Serialize, Clone, Debug, PartialEq, Eq, ToSchema, TS)]
pub struct WaitingList {
    /// The items, oldest `since` first.
    pub items: Vec<WaitingItem>,
}

impl Service {
    /// Every flow run at a gate or needing attention (top-level, not
    /// archived), every build at a gate and every manual prompt, oldest first.
    pub fn waiting_items(&self) -> Result<WaitingList> {
        let (outlines, builds) = {
            let db = self.db();
            (
                flow_store::run_outlines(&db, None)?,
                store::waiting::build_gates(&db)?,
            )
        };
        let names: HashMap<String, String> = outlines
            .iter()
            .map(|r| (r.id.clone(), r.flow_name.clone()))
            .collect();
        let mut items: Vec<WaitingItem> = outlines
            .into_iter()
            .filter(|r| !r.archived)
            .filter_map(|r| {
                let kind = match r.status.as_str() {
                    "waiting" => WaitingKind::Gate,
                    "needs_attention" => WaitingKind::Attention,
                    _ => return None,
                };
                Some(WaitingItem {
                    id: r.id.clone(),
                    kind,
                    title: r.title,
                    flow_name: Some(r.flow_name),
                    run_id: Some(r.id),
                    workflow_id: None,
                    since: r.last_turn_at,
                })
            })
            .collect();
        items.extend(builds.into_iter().map(|b| WaitingItem {
            id: b.version_id,
            kind: WaitingKind::BuildGate,
            title: b.name.unwrap_or_default(),
            flow_name: None,
            run_id: None,
            workflow_id: Some(b.workflow_id),
            since: b.since,
        }));
        for prompt in self.manual_prompts() {
            items.push(self.prompt_item(prompt, &names));
        }
        items.sort_by(|a, b| a.since.cmp(&b.since).then_with(|| a.id.cmp(&b.id)));
        Ok(WaitingList { items })
    }

    /// A prompt as a waiting item, linked to the top-level run that asked it.
    fn prompt_item(&self, prompt: ManualPrompt, names: &HashMap<String, String>) -> WaitingItem {
        let (flow_name, run_id) = match &prompt.waiter {
            Some(ManualWaiter::FlowRun { run_id }) => match names.get(run_id) {
                Some(name) => (Some(name.clone()), Some(run_id.clone())),
                None => self.top_run(run_id),
            },
            _ => (None, None),
        };
        WaitingItem {
            id: prompt.id,
            kind: WaitingKind::ManualPrompt,
            title: prompt.role,
            flow_name,
            run_id,
            workflow_id: prompt.workflow_id,
            since: prompt.created_at,
        }
    }

    /// The flow and id of the top-level run above `run_id` (a subflow's).
    fn top_run(&self, run_id: &str) -> (Option<String>, Option<String>) {
        let mut id = run_id.to_owned();
        for _ in 0..MAX_PARENTS {
            let Ok(view) = self.flows().get_run(&id) else {
                return (None, None);
            };
            match view.parent_id {
                Some(parent) => id = parent,
                None => return (Some(view.flow_name), Some(view.conversation_id)),
            }
        }
        (None, None)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::service::tests::service_with;
    use crate::store::manual_prompts as prompts;
    use maskflow_flows::RunStatus;
    use maskflow_flows::store::{self as fstore, RunRow};

    fn stored(s: &Service, id: &str, status: RunStatus, parent: Option<&str>, archived: bool) {
        let row = RunRow {
            id: id.into(),
            flow_name: "review".into(),
            title: format!("Flow: review {id}"),
            status,
            definition: serde_json::json!({}),
            state: Default::default(),
            pending: None,
            error: None,
            working_folder: None,
            archived,
            stop_requested: false,
            parent_id: parent.map(str::to_owned),
            depth: u32::from(parent.is_some()),
            created_at: format!("2026-01-01T00:00:0{}Z", id.len() % 10),
            updated_at: "2026-01-01T00:00:00Z".into(),
        };
        fstore::insert_run(&s.db(), &row, "local").expect("insert");
    }

    fn prompt(id: &str, waiter: Option<ManualWaiter>) -> ManualPrompt {
        ManualPrompt {
            id: id.into(),
            role: "agent:reviewer".into(),
            workflow_id: None,
            messages: Vec::new(),
            schema: None,
            created_at: "2026-01-02T00:00:00Z".into(),
            waiter,
            interrupted: None,
        }
    }

    #[test]
    fn gates_escalations_and_prompts_are_listed_once_and_nothing_else() {
        let home = tempfile::tempdir().expect("tmp");
        let s = service_with(home.path(), Arc::new(maskflow_llm::Unconfigured));
        assert!(s.waiting_items().expect("list").items.is_empty());

        stored(&s, "flow_a", RunStatus::Waiting, None, false);
        stored(&s, "flow_bb", RunStatus::NeedsAttention, None, false);
        stored(&s, "flow_ccc", RunStatus::Completed, None, false);
        stored(&s, "flow_dddd", RunStatus::Failed, None, false);
        stored(&s, "flow_eeeee", RunStatus::Waiting, None, true);
        // A waiting subflow's top run waits too: the subflow is not listed twice.
        stored(&s, "flow_top", RunStatus::Waiting, None, false);
        stored(&s, "flow_sub", RunStatus::Waiting, Some("flow_top"), false);
        let sub_prompt = prompt(
            "mp_1",
            Some(ManualWaiter::FlowRun {
                run_id: "flow_sub".into(),
            }),
        );
        prompts::insert(&s.db(), &sub_prompt, None, &s.inner.owner).expect("prompt");

        let items = s.waiting_items().expect("list").items;
        let kinds: Vec<(&str, WaitingKind)> =
            items.iter().map(|i| (i.id.as_str(), i.kind)).collect();
        assert_eq!(
            kinds,
            vec![
                ("flow_a", WaitingKind::Gate),
                ("flow_bb", WaitingKind::Attention),
                ("flow_top", WaitingKind::Gate),
                ("mp_1", WaitingKind::ManualPrompt),
            ]
        );
        let mp = &items[3];
        assert_eq!(mp.title, "agent:reviewer");
        assert_eq!(
            (mp.flow_name.as_deref(), mp.run_id.as_deref()),
            (Some("review"), Some("flow_top")),
            "a subflow's prompt opens its top run"
        );
        assert_eq!(items[0].run_id.as_deref(), Some("flow_a"));
        assert_eq!(items[0].flow_name.as_deref(), Some("review"));
    }
}
