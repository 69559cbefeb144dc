//! Flows behind the facade: one method per flow call the shells make, so
//! no shell reaches into the [`FlowEngine`](maskflow_flows::FlowEngine). The
//! engine's errors become `CoreError`s of the same name here.

use std::path::Path;
use std::sync::{Arc, Weak};

use serde_json::Value;

use super::flow_scripts::SandboxedScripts;
use super::{Inner, Service, llm::ServiceBackends};
use crate::error::Result;
use crate::events::EventBus;
use maskflow_clock::IdGen;
use maskflow_flows::FlowPorts;
use maskflow_flows::bundle::{FlowBundle, ImportRequest};
use maskflow_flows::{FlowList, FlowSummary, GateAnswer, RunHandle, RunList, RunPatch, RunView};
use maskflow_flows::{RunStatus, StartFlow, Started};

/// A run going on in a task of its own; awaited, it ends with the run's
/// status (stopped, waiting at a gate, completed, failed…).
pub type FlowTask = tokio::task::JoinHandle<RunStatus>;

impl Service {
    /// Every flow in `flows/` (re-read now); invalid ones are disabled.
    pub fn flow_list(&self) -> Result<FlowList> {
        Ok(self.flows().list()?)
    }

    /// A flow's definition as written.
    pub fn flow_definition(&self, name: &str) -> Result<Value> {
        Ok(self.flows().definition(name)?)
    }

    /// The step of flow `name` whose id is `stage_id`.
    pub fn flow_step(&self, name: &str, stage_id: &str) -> Result<Value> {
        Ok(self.flows().step(name, stage_id)?)
    }

    /// Starts a run, or resumes one; the run goes on in the background.
    pub fn flow_start(&self, name: &str, request: StartFlow) -> Result<Started> {
        Ok(self.flows().start(name, request)?)
    }

    /// Like [`Service::flow_start`], returning the run's handle to drive
    /// (tests drive it step by step).
    pub(crate) fn flow_prepare(
        &self,
        name: &str,
        request: StartFlow,
    ) -> Result<(Started, RunHandle)> {
        Ok(self.flows().prepare(name, request)?)
    }

    /// Starts or resumes a run, as [`Service::flow_start`] does, and hands
    /// back its task to wait on until the run ends (the command line waits
    /// on it while it prints the run's events and answers its prompts).
    pub fn flow_run_to_end(&self, name: &str, request: StartFlow) -> Result<(Started, FlowTask)> {
        let (started, handle) = self.flow_prepare(name, request)?;
        Ok((started, tokio::spawn(handle.run())))
    }

    /// A flow's runs, newest first.
    pub fn flow_runs(&self, name: &str) -> Result<RunList> {
        Ok(self.list_with_liveness(self.flows().runs(name)?))
    }

    /// One run with its transcript and pending question, and whether a live
    /// process runs it.
    pub fn flow_run(&self, id: &str) -> Result<RunView> {
        Ok(self.with_liveness(self.flows().get_run(id)?))
    }

    /// Renames or (un)archives a run.
    pub fn flow_patch(&self, id: &str, patch: RunPatch) -> Result<RunView> {
        Ok(self.with_liveness(self.flows().patch(id, patch)?))
    }

    /// Stops a run: the step in flight is cancelled.
    pub async fn flow_stop(&self, id: &str) -> Result<RunView> {
        let view = self.flows().stop(id).await?;
        // Its step's manual prompt, if any, went with the stopped step.
        self.forget_prompts(&maskflow_llm::call::ManualWaiter::FlowRun {
            run_id: id.to_owned(),
        });
        Ok(self.with_liveness(view))
    }

    /// Answers the gate a run waits at; the run carries on in the background.
    pub fn flow_answer(&self, id: &str, answer: GateAnswer) -> Result<Started> {
        Ok(self.flows().answer(id, answer)?)
    }

    /// Like [`Service::flow_answer`], returning the handle instead of spawning it.
    pub(crate) fn flow_prepare_answer(
        &self,
        id: &str,
        answer: GateAnswer,
    ) -> Result<(Started, Option<RunHandle>)> {
        Ok(self.flows().prepare_answer(id, answer)?)
    }

    /// Answers the gate a run waits at, as [`Service::flow_answer`] does,
    /// and hands back the task of the run going on to wait on (none when
    /// the answer ended the run).
    pub fn flow_answer_to_end(
        &self,
        id: &str,
        answer: GateAnswer,
    ) -> Result<(Started, Option<FlowTask>)> {
        let (started, handle) = self.flow_prepare_answer(id, answer)?;
        Ok((started, handle.map(|h| tokio::spawn(h.run()))))
    }

    /// Cancels the LLM call in flight in a run's step (a stale `inflight_id` is refused).
    pub async fn flow_cancel_inflight(
        &self,
        conversation_id: &str,
        inflight_id: Option<&str>,
    ) -> Result<RunView> {
        let view = self
            .flows()
            .cancel_inflight(conversation_id, inflight_id)
            .await?;
        Ok(self.with_liveness(view))
    }

    /// A flow as Mermaid.
    pub fn flow_mermaid(&self, name: &str) -> Result<String> {
        Ok(self.flows().mermaid(name)?)
    }

    /// A flow with its agents as one bundle.
    pub fn flow_export(&self, name: &str) -> Result<FlowBundle> {
        Ok(self.flows().export_bundle(name)?)
    }

    /// Imports a bundle or a Mermaid diagram.
    pub fn flow_import(&self, request: ImportRequest) -> Result<FlowSummary> {
        Ok(self.flows().import_flow(request)?)
    }
}

/// The flow engine's ports, served by the service behind `inner`: agents'
/// back ends behind the guard and the ledger, `script` steps in the
/// sandboxed runner (every file of the working folder indexed by the guard
/// first), and the service's events. Weak: the engine lives inside the
/// service it asks.
pub(super) fn ports(
    inner: &Weak<Inner>,
    home: &Path,
    ids: &Arc<dyn IdGen>,
    events: &EventBus,
) -> FlowPorts {
    FlowPorts {
        agents: Arc::new(ServiceBackends::new(inner.clone())),
        scripts: Arc::new(SandboxedScripts::for_service(
            inner.clone(),
            home,
            ids.clone(),
        )),
        events: Arc::new(events.clone()),
    }
}
