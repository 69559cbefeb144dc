//! The manual back end's prompts, restart-safe (issue 19): each prompt is
//! stored with who waits on it (a version's build, a flow run) and, for a
//! build, which call asked ([`crate::builder::call`]). Prompts waiting in
//! this process are answered as before; a prompt left by an earlier process
//! (a restart, a crash) is listed again with what happened, and answering
//! it stores the answer and restarts its waiter at the phase that asked —
//! the message's turn redoes the validator's or the clarifier's call
//! ([`turns`]), the build redoes the builder's call (or its plan or review
//! call), the flow run resumes
//! its step — and that same call takes the stored answer. A prompt whose
//! waiter cannot go on is listed with the reason, and dismissing it is left.

#[cfg(test)]
mod plan_review_tests;
#[cfg(test)]
mod tests;
mod turns;

use std::sync::{Arc, Weak};

use super::builds::{Drive, build_waiter};
use super::{Inner, Service};
use crate::builder::{BuildState, Phase, Stage};
use crate::error::{CoreError, Result};
use crate::store::leases::{self, LeaseOwner};
use crate::store::manual_prompts::{self as rows, StoredPrompt};
use crate::store::{self, builds};
use crate::versions::Status;
use maskflow_flows::{RunStatus, StartFlow};
use maskflow_llm::call::ManualWaiter;
use maskflow_llm::manual::{
    ManualError, ManualInterruption, ManualPrompt, ManualStore, StoredAnswer,
};
use maskflow_llm::{Provider, Role};

/// The manual back end's store: the service's database. Weak, as the
/// provider lives inside the service.
#[derive(Debug)]
pub(super) struct PromptStore(Weak<Inner>);

impl PromptStore {
    pub(super) fn new(service: &Service) -> Self {
        Self(Arc::downgrade(&service.inner))
    }

    fn service(&self) -> Option<Service> {
        self.0.upgrade().map(|inner| Service { inner })
    }
}

impl ManualStore for PromptStore {
    fn save(&self, prompt: &ManualPrompt) -> std::result::Result<(), String> {
        let service = self.service().ok_or("Maskflow is shutting down")?;
        let me = service.inner.owner.clone();
        // The call that asks, when it said (a build's phases do).
        let tag = maskflow_llm::call::tag();
        let key = tag.as_ref().map(|t| t.key.as_str());
        let replaced = {
            let db = service.db();
            let replaced = rows::drop_replaced(&db, prompt, key, &me).map_err(|e| e.to_string())?;
            rows::insert(&db, prompt, tag.as_ref(), &me).map_err(|e| e.to_string())?;
            replaced
        };
        // The work was resumed another way and asks the same again.
        for id in replaced {
            service.llm_manual().announce_closed(&id, "replaced");
        }
        Ok(())
    }

    fn remove(&self, id: &str) {
        if let Some(service) = self.service()
            && let Err(e) = rows::delete(&service.db(), id)
        {
            eprintln!("maskflow: could not forget manual prompt {id}: {e}");
        }
    }

    fn take_answer(&self, prompt: &ManualPrompt) -> Option<StoredAnswer> {
        let service = self.service()?;
        let tag = maskflow_llm::call::tag();
        let db = service.db();
        rows::take_answer(&db, prompt, tag.as_ref().map(|t| t.key.as_str())).unwrap_or_else(|e| {
            eprintln!("maskflow: could not read stored manual answers: {e}");
            None
        })
    }
}

impl Service {
    /// Maskflow is stopping: builds and flow steps dropped from now on keep
    /// their manual prompts stored, to be shown again at the next start.
    pub fn stopping(&self) {
        self.llm_manual().stopping();
    }

    /// The prompts waiting for the user to paste an answer: those of this
    /// process, then those left by an earlier one (with what happened).
    pub fn manual_prompts(&self) -> Vec<ManualPrompt> {
        let manual = self.llm_manual();
        let mut out = manual.pending();
        let stored = rows::list(&self.db()).unwrap_or_else(|e| {
            eprintln!("maskflow: could not read stored manual prompts: {e}");
            Vec::new()
        });
        for row in stored {
            if manual.is_waiting(&row.prompt.id) {
                continue;
            }
            if let Some(note) = self.interruption(&row) {
                let mut prompt = row.prompt;
                prompt.interrupted = Some(note);
                out.push(prompt);
            }
        }
        out.sort_by(|a, b| (&a.created_at, &a.id).cmp(&(&b.created_at, &b.id)));
        out
    }

    /// Answers a waiting manual prompt with the pasted `text`; a prompt left
    /// by an earlier process restarts the work that waited on it.
    pub fn answer_manual(&self, id: &str, text: &str) -> Result<()> {
        let manual = self.llm_manual();
        if manual.is_waiting(id) {
            return manual.answer(id, text).map_err(|e| manual_error(e, id));
        }
        if text.trim().is_empty() {
            return Err(manual_error(ManualError::Empty, id));
        }
        let row = rows::get(&self.db(), id)?.ok_or_else(|| not_found(id))?;
        let note = self.interruption(&row).ok_or_else(|| {
            CoreError::Conflict(format!(
                "manual prompt {id} was already answered; its work is taking the answer"
            ))
        })?;
        if !note.resumes {
            return Err(CoreError::Conflict(note.reason));
        }
        // A message's turn is claimed before the answer is stored, so a
        // message sent meanwhile and this answer never run at once.
        let turn = match turns::is_turn(&row) {
            Some(workflow_id) => Some(self.claim_turn(&row, workflow_id)?),
            None => None,
        };
        if !rows::set_answer(&self.db(), id, text, &self.now())? {
            return Err(not_found(id));
        }
        let resumed = match (&row.prompt.waiter, turn) {
            (_, Some(claimed)) => {
                self.continue_turn(claimed);
                Ok(())
            }
            (
                Some(ManualWaiter::Build {
                    workflow_id,
                    version_id,
                }),
                None,
            ) => self.continue_build(workflow_id, version_id),
            (Some(ManualWaiter::FlowRun { run_id }), None) => self.continue_flow_run(run_id),
            (None, None) => Err(CoreError::Conflict(note.reason)),
        };
        if let Err(e) = resumed {
            // Nothing moved on: the prompt waits as before.
            let _ = rows::delete(&self.db(), id);
            let _ = rows::insert(
                &self.db(),
                &row.prompt,
                row.call.as_ref(),
                &LeaseOwner {
                    pid: row.owner_pid,
                    id: row.owner_id.clone(),
                },
            );
            return Err(e);
        }
        Ok(())
    }

    /// Dismisses a waiting manual prompt: its call fails as cancelled (a
    /// build left waiting on it by a restart is failed, saying why).
    pub fn dismiss_manual(&self, id: &str) -> Result<()> {
        let manual = self.llm_manual();
        if manual.is_waiting(id) {
            return manual.dismiss(id).map_err(|e| manual_error(e, id));
        }
        let row = rows::get(&self.db(), id)?.ok_or_else(|| not_found(id))?;
        if self.interruption(&row).is_none() {
            return Err(CoreError::Conflict(format!(
                "manual prompt {id} is in use: its work is running; stop that work instead"
            )));
        }
        rows::delete(&self.db(), id)?;
        manual.announce_closed(id, "dismissed");
        if let Some(ManualWaiter::Build {
            workflow_id,
            version_id,
        }) = &row.prompt.waiter
            && row.prompt.role == Role::Builder.key()
            && self.build_waits_on_call(version_id)
        {
            self.finish_build(
                workflow_id,
                version_id,
                Err(CoreError::Conflict(
                    "you dismissed the builder's prompt Maskflow was waiting on when it stopped, \
                     so the build stopped; edit the request to build again"
                        .into(),
                )),
            )?;
        }
        Ok(())
    }

    /// Forgets the stored prompts of work that ended.
    pub(super) fn forget_prompts(&self, waiter: &ManualWaiter) {
        if let Err(e) = rows::delete_for(&self.db(), waiter) {
            eprintln!("maskflow: could not forget the manual prompts of ended work: {e}");
        }
    }

    /// Whether a stored prompt keeps a build in `building` across a restart.
    pub(super) fn build_has_stored_prompt(
        conn: &rusqlite::Connection,
        workflow_id: &str,
        version_id: &str,
    ) -> bool {
        rows::list(conn).is_ok_and(|all| {
            all.iter().any(|r| {
                r.answer.is_none()
                    && r.prompt.role == Role::Builder.key()
                    && r.prompt.waiter == Some(build_waiter(workflow_id, version_id))
            })
        })
    }

    /// What became of a stored prompt that does not wait in this process;
    /// `None` when its work is running (in this process or another) and
    /// will deal with it.
    fn interruption(&self, row: &StoredPrompt) -> Option<ManualInterruption> {
        match &row.prompt.waiter {
            None => Some(self.message_interruption(row)),
            Some(ManualWaiter::Build { workflow_id, .. }) if turns::is_turn(row).is_some() => {
                self.turn_interruption(row, workflow_id)
            }
            Some(ManualWaiter::Build {
                workflow_id,
                version_id,
            }) => self.build_interruption(row, workflow_id, version_id),
            Some(ManualWaiter::FlowRun { run_id }) => self.flow_interruption(row, run_id),
        }
    }

    /// The live lease of another process on `resource`.
    fn held_elsewhere(&self, resource: &str) -> Option<leases::Lease> {
        let now_ms = i64::try_from(self.inner.clock.now_ms()).unwrap_or(i64::MAX);
        leases::held_elsewhere(&self.db(), resource, &self.inner.owner, now_ms)
            .ok()
            .flatten()
    }

    /// A prompt of no known waiter (stored by an older Maskflow, or by work
    /// that set none).
    fn message_interruption(&self, row: &StoredPrompt) -> ManualInterruption {
        let me = &self.inner.owner;
        if row.owner_id != me.id && leases::pid_alive(row.owner_pid) {
            return elsewhere(row.owner_pid);
        }
        let then = if row.prompt.role.starts_with("agent:") {
            "resume its flow run to ask again"
        } else {
            "send your message again"
        };
        ManualInterruption {
            resumes: false,
            reason: format!(
                "Maskflow stopped while this {} prompt waited, and the work that asked for it was \
                 cut off before it could take an answer (nothing was changed). Dismiss this prompt \
                 and {then}.",
                row.prompt.role
            ),
        }
    }

    fn build_interruption(
        &self,
        row: &StoredPrompt,
        workflow_id: &str,
        version_id: &str,
    ) -> Option<ManualInterruption> {
        if let Some(l) = self.held_elsewhere(&super::leases::build(version_id)) {
            return row.answer.is_none().then(|| elsewhere(l.owner_pid));
        }
        if self.build_running_here(version_id) {
            return None;
        }
        let what = self.build_name(workflow_id, version_id);
        if row.answer.is_some() {
            return Some(ended(format!(
                "Your answer was kept, but {what} did not take it (it asked something else when \
                 it continued)"
            )));
        }
        if self.build_waits_on_call(version_id) {
            return Some(cut(&what, "the build continues from this step"));
        }
        let status = store::get_version(&self.db(), version_id)
            .ok()
            .flatten()
            .map(|v| v.status.as_str().replace('_', " "));
        Some(ended(match status {
            Some(s) => format!("{what} no longer waits for it (the version is {s})"),
            None => format!("{what} was deleted"),
        }))
    }

    fn flow_interruption(&self, row: &StoredPrompt, run_id: &str) -> Option<ManualInterruption> {
        if self.flows().inflight_id(run_id).is_some() {
            return None;
        }
        if let Some(l) = self.held_elsewhere(&format!("flow_run:{run_id}")) {
            return row.answer.is_none().then(|| elsewhere(l.owner_pid));
        }
        let run = self.flows().get_run(run_id).ok();
        let what = match &run {
            Some(r) => format!("flow run {run_id} (flow \u{201c}{}\u{201d})", r.flow_name),
            None => format!("flow run {run_id}"),
        };
        if row.answer.is_some() {
            return Some(ended(format!(
                "Your answer was kept, but {what} did not take it (it asked something else when \
                 it resumed)"
            )));
        }
        Some(match run {
            Some(r) if r.status == RunStatus::Running && !r.archived => {
                cut(&what, "the run resumes at the step that asked")
            }
            Some(r) => ended(format!(
                "{what} no longer waits for it (it is {})",
                r.status.as_str().replace('_', " ")
            )),
            None => ended(format!("{what} was deleted")),
        })
    }

    /// "the build of “Name” version N" (or of version `ver_…`).
    fn build_name(&self, workflow_id: &str, version_id: &str) -> String {
        let db = self.db();
        let name = store::get_workflow(&db, workflow_id)
            .ok()
            .flatten()
            .and_then(|w| w.name);
        let number = store::get_version(&db, version_id)
            .ok()
            .flatten()
            .map(|v| v.version);
        match (name, number) {
            (Some(n), Some(v)) => format!("the build of \u{201c}{n}\u{201d} version {v}"),
            (None, Some(v)) => format!("the build of version {v} of workflow {workflow_id}"),
            _ => format!("the build of version {version_id}"),
        }
    }

    /// Whether this process is building the version (it holds the lease).
    fn build_running_here(&self, version_id: &str) -> bool {
        let now_ms = i64::try_from(self.inner.clock.now_ms()).unwrap_or(i64::MAX);
        leases::holder(&self.db(), &super::leases::build(version_id), now_ms)
            .ok()
            .flatten()
            .is_some_and(|l| l.owner_id == self.inner.owner.id)
    }

    /// Whether a version is building with its builder's call cut off
    /// (building, at a builder, plan or review call, no gate pending).
    fn build_waits_on_call(&self, version_id: &str) -> bool {
        let db = self.db();
        let building = store::get_version(&db, version_id)
            .ok()
            .flatten()
            .is_some_and(|v| v.status == Status::Building);
        let state: Option<BuildState> = builds::get_build(&db, version_id)
            .ok()
            .flatten()
            .and_then(|r| serde_json::from_value(r.state).ok());
        building
            && state.is_some_and(|s| {
                !s.pending_gate
                    && (s.asking.is_some()
                        || matches!(
                            (s.phase, s.stage),
                            (Phase::Generate | Phase::Revise, Some(Stage::Response))
                        ))
            })
    }

    /// Restarts a build whose builder call was cut off; the repeated call
    /// takes the stored answer.
    fn continue_build(&self, workflow_id: &str, version_id: &str) -> Result<()> {
        // Only the manual back end takes the stored answer.
        let builder = self.llm(&Role::Builder, Some(workflow_id), Some(version_id), None)?;
        if !Provider::is_manual(&builder) {
            return Err(CoreError::Conflict(format!(
                "the builder now uses the {} back end, not the manual one, so the build would not \
                 take this answer; set the builder back to manual in Settings to answer it, or \
                 dismiss it",
                Provider::name(&builder)
            )));
        }
        // Refused here, with the pid, while another process builds it.
        drop(self.lease(super::leases::build(version_id))?);
        let service = self.clone();
        let (wf, vid) = (workflow_id.to_owned(), version_id.to_owned());
        tokio::spawn(async move { service.run_build(&wf, &vid, Drive::Continue).await });
        Ok(())
    }

    /// Resumes a flow run at its step in flight; the step's repeated call
    /// takes the stored answer.
    fn continue_flow_run(&self, run_id: &str) -> Result<()> {
        let run = self.flows().get_run(run_id)?;
        let request = StartFlow {
            conversation_id: Some(run_id.to_owned()),
            ..StartFlow::default()
        };
        self.flows().start(&run.flow_name, request)?;
        Ok(())
    }
}

/// Cut off by a restart, and an answer continues the work.
fn cut(what: &str, then: &str) -> ManualInterruption {
    ManualInterruption {
        resumes: true,
        reason: format!(
            "Maskflow stopped while {what} waited for this answer. Paste the answer and {then}; \
             nothing done before was lost."
        ),
    }
}

/// The work ended: only dismissing is left.
fn ended(why: String) -> ManualInterruption {
    ManualInterruption {
        resumes: false,
        reason: format!("{why}, so this prompt can no longer be answered; dismiss it."),
    }
}

/// Waiting in another live process.
fn elsewhere(pid: u32) -> ManualInterruption {
    ManualInterruption {
        resumes: false,
        reason: format!(
            "This prompt waits in another Maskflow process (pid {pid}); answer it there."
        ),
    }
}

fn not_found(id: &str) -> CoreError {
    CoreError::not_found("manual prompt", id)
}

fn manual_error(e: ManualError, id: &str) -> CoreError {
    match e {
        ManualError::NotFound(_) => not_found(id),
        other => CoreError::InvalidRequest(other.to_string()),
    }
}
