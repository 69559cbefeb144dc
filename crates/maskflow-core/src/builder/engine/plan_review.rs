//! The engine's plan and review steps (issue 31 point 3): the optional
//! PLAN before any code (`planning-prompt.md`, `planning-response.md`,
//! `plan.md`), and the LLM review of each new script before its local
//! test (`review-prompt.md`, `review-reply.md`, `review-response.md`).
//! Both call the builder's back end, so both pass the privacy guard and
//! the ledger; the prompts and parsers are the pure [`plan`] and
//! [`review`] modules. Each call carries its tag ([`call`]) and the state
//! says which is in flight ([`Asking`]), so a manual prompt cut off by a
//! restart is answered into the same call made again.

use super::Engine;
use super::job::{Asking, BuildJob, BuildState, OnChange, Outcome};
use super::session::render;
use crate::builder::call::{self, CallTag};
use crate::builder::plan;
use crate::builder::review::{self, ReviewNote, Verdict};
use crate::builder::table::{Command, Phase};
use maskflow_llm::{ChatMessage, ChatRole, LlmRequest, Provider, ProviderError};
use maskflow_privacy::guard;

/// What the plan step came to.
pub(super) enum Planned {
    /// Approved (by the AI reviewer): go on to the generation.
    Approved,
    /// Waiting for a person to approve or edit it.
    Pending,
    /// No usable plan; `state.reason` says why.
    Failed,
}

/// What the review before the test decided.
pub(super) enum Reviewed {
    /// Run the local test.
    Test,
    /// The reviewer, deciding the gate, sent the script back once.
    Revise,
}

impl Engine {
    /// Sends `request` (a structured reply is wanted) and parses the reply
    /// with one repair, writing each reply to `<file>.md` / `<file>-repair.md`.
    /// `Err` is a back-end failure; `Ok(Err(reason))` a reply unusable twice.
    async fn ask<T>(
        &self,
        job: &BuildJob,
        state: &BuildState,
        (mut request, tag): (LlmRequest, CallTag),
        file: &str,
        parse: fn(&str) -> Result<T, String>,
    ) -> Result<Result<T, String>, String> {
        let mut reason = String::new();
        // The call's identity, fixed before its repair: a manual prompt of
        // it answered after a restart goes to this call only.
        let tagged = self.provider.clone().tagged(tag.for_the_call());
        for attempt in 1..=2 {
            // Maskflow's own calls: nobody can confirm a block, so it says
            // what to do instead.
            let reply = tagged
                .complete(&request, &|_| {})
                .await
                .map_err(|e| match e {
                    ProviderError::PrivacyBlocked(m) => guard::blocked_repair_message(&m),
                    e => e.to_string(),
                })?
                .text;
            let name = if attempt == 1 {
                format!("{file}.md")
            } else {
                format!("{file}-repair.md")
            };
            self.write(job, state, &name, &reply)?;
            match parse(&reply) {
                Ok(value) => return Ok(Ok(value)),
                Err(why) => {
                    request
                        .messages
                        .push(ChatMessage::new(ChatRole::Assistant, reply));
                    request.messages.push(ChatMessage::new(
                        ChatRole::User,
                        self.profile.repair_prompt(&why),
                    ));
                    reason = why;
                }
            }
        }
        Ok(Err(reason))
    }

    /// Proposes a plan (again, with the person's `feedback`, after a
    /// rejection); the AI reviewer approves it when the workflow says so,
    /// else it waits for a person.
    pub(super) async fn plan_step(
        &self,
        job: &BuildJob,
        state: &mut BuildState,
        feedback: Option<&str>,
        on: OnChange<'_>,
    ) -> Planned {
        let request = plan::planning_request(&job.extracts, &job.history, feedback);
        if let Err(e) = self.write(job, state, "planning-prompt.md", &render(&request)) {
            state.reason = Some(e);
            return Planned::Failed;
        }
        let feedback = feedback.map(str::to_owned);
        let tag = call::plan(feedback.as_deref());
        asking(state, Some(Asking::Plan { feedback }), on);
        let asked = self
            .ask(job, state, (request, tag), "planning-response", plan::parse)
            .await;
        asking(state, None, on);
        let proposed = match asked {
            Err(e) => {
                state.reason = Some(format!("the plan could not be made: {e}"));
                return Planned::Failed;
            }
            Ok(Err(why)) => {
                state.reason = Some(format!("the planner gave an unusable reply twice: {why}"));
                return Planned::Failed;
            }
            Ok(Ok(p)) => plan::render(&p),
        };
        if let Err(e) = self.write(job, state, "plan.md", &proposed) {
            state.reason = Some(e);
            return Planned::Failed;
        }
        self.plan_approval(job, state, proposed, on).await
    }

    /// The AI reviewer approves the proposed plan when the workflow says
    /// so, else (or when it asks for changes) the plan waits for a person.
    async fn plan_approval(
        &self,
        job: &BuildJob,
        state: &mut BuildState,
        proposed: String,
        on: OnChange<'_>,
    ) -> Planned {
        if job.options.ai_approver {
            let request = review::plan_request(&job.extracts, &job.history, &proposed);
            let tag = call::plan_review(&proposed);
            let in_flight = Asking::PlanReview {
                proposed: proposed.clone(),
            };
            asking(state, Some(in_flight), on);
            let note = self.review(job, state, (request, tag), "plan", true).await;
            asking(state, None, on);
            if note.verdict == Some(Verdict::Approve) {
                state.plan = Some(proposed);
                on(state);
                return Planned::Approved;
            }
            // Changes asked, or no usable verdict: the person decides,
            // with the reviewer's notes beside the plan.
        }
        state.pending_plan = Some(proposed);
        Planned::Pending
    }

    /// Starts the build behind its plan when the workflow asks for one.
    pub(super) async fn start_planned(
        &self,
        job: &BuildJob,
        state: &mut BuildState,
        feedback: Option<&str>,
        on: OnChange<'_>,
    ) -> Outcome {
        let planned = self.plan_step(job, state, feedback, on).await;
        self.after_plan(job, state, planned, on).await
    }

    /// Goes on from the plan step: to the generation, the person's gate, or
    /// the failure.
    async fn after_plan(
        &self,
        job: &BuildJob,
        state: &mut BuildState,
        planned: Planned,
        on: OnChange<'_>,
    ) -> Outcome {
        match planned {
            Planned::Approved => self.drive(job, state, Command::Start, on).await,
            Planned::Pending => self.pause(state, on),
            Planned::Failed => {
                state.phase = Phase::Failed;
                state.stage = None;
                on(state);
                Outcome::Failed
            }
        }
    }

    /// Resolves the plan gate: approve (with the person's edited plan, when
    /// given) goes on to the generation; reject plans again with feedback.
    pub(super) async fn resume_plan(
        &self,
        job: &BuildJob,
        state: &mut BuildState,
        proposed: String,
        decision: (bool, Option<String>, Option<String>),
        on: OnChange<'_>,
    ) -> Outcome {
        let (approve, feedback, edited) = decision;
        if !approve {
            return self
                .start_planned(job, state, feedback.as_deref(), on)
                .await;
        }
        let approved = match edited.map(|e| plan::check_edited(&e)) {
            Some(Ok(text)) => {
                if let Err(e) = self.write(job, state, "plan.md", &text) {
                    state.reason = Some(e);
                    state.phase = Phase::Failed;
                    on(state);
                    return Outcome::Failed;
                }
                text
            }
            Some(Err(why)) => {
                // Checked before the gate was taken; kept as a guard.
                state.pending_plan = Some(proposed);
                state.reason = Some(why);
                return self.pause(state, on);
            }
            None => proposed,
        };
        state.reason = None;
        state.plan = Some(approved);
        on(state);
        self.drive(job, state, Command::Start, on).await
    }

    /// Reviews the iteration's script before its test when the workflow
    /// asks for it (once per iteration). The verdict decides only with the
    /// AI approver on, and then sends the script back once at most.
    pub(super) async fn review_before_test(
        &self,
        job: &BuildJob,
        state: &mut BuildState,
        on: OnChange<'_>,
    ) -> Reviewed {
        if !job.options.reviews_script() || state.reviewed_iteration == state.iteration {
            return Reviewed::Test;
        }
        let Some(spec) = state.spec.clone() else {
            return Reviewed::Test;
        };
        state.reviewed_iteration = state.iteration;
        let decides = job.options.ai_approver;
        let request = review::script_request(&job.extracts, &job.history, &spec);
        let tag = call::script_review(state.iteration, &spec);
        asking(state, Some(Asking::ScriptReview), on);
        let note = self
            .review(job, state, (request, tag), "script", decides)
            .await;
        asking(state, None, on);
        if decides && note.verdict == Some(Verdict::RequestChanges) && state.review_revisions < 1 {
            state.review_revisions += 1;
            state.feedback = Some(format!(
                "A reviewer read the script before it ran and asked for changes: {}",
                note.notes.trim()
            ));
            return Reviewed::Revise;
        }
        Reviewed::Test
    }

    /// One review: the prompt, the reply and the rendered verdict written
    /// to the session folder, the note kept in the state. An unusable reply
    /// or a failed call is a note without a verdict: it decides nothing.
    async fn review(
        &self,
        job: &BuildJob,
        state: &mut BuildState,
        (request, tag): (LlmRequest, CallTag),
        subject: &str,
        decides: bool,
    ) -> ReviewNote {
        let prefix = if subject == "plan" {
            "plan-review"
        } else {
            "review"
        };
        let _ = self.write(
            job,
            state,
            &format!("{prefix}-prompt.md"),
            &render(&request),
        );
        let asked = self
            .ask(
                job,
                state,
                (request, tag),
                &format!("{prefix}-reply"),
                review::parse,
            )
            .await;
        let (verdict, notes) = match asked {
            Ok(Ok(reply)) => (Some(reply.verdict), reply.notes.trim().to_owned()),
            Ok(Err(why)) => (None, format!("The reviewer's reply was refused: {why}")),
            Err(e) => (None, format!("The review could not be made: {e}")),
        };
        let note = ReviewNote {
            subject: subject.to_owned(),
            iteration: state.iteration.max(1),
            verdict,
            notes,
            decided_gate: decides && verdict.is_some(),
        };
        let _ = self.write(
            job,
            state,
            &format!("{prefix}-response.md"),
            &review::render(&note),
        );
        state.reviews.push(note.clone());
        note
    }
}

impl Engine {
    /// Makes again the plan or review call a restart cut off (its manual
    /// prompt was answered after the restart), then goes on from it as the
    /// build would have.
    pub(super) async fn continue_asking(
        &self,
        job: &BuildJob,
        state: &mut BuildState,
        in_flight: Asking,
        on: OnChange<'_>,
    ) -> Outcome {
        match in_flight {
            Asking::Plan { feedback } => {
                self.start_planned(job, state, feedback.as_deref(), on)
                    .await
            }
            Asking::PlanReview { proposed } => {
                let planned = self.plan_approval(job, state, proposed, on).await;
                self.after_plan(job, state, planned, on).await
            }
            Asking::ScriptReview => {
                // The review was cut off: this iteration is reviewed anew.
                state.reviewed_iteration = 0;
                let command = match self.review_before_test(job, state, on).await {
                    Reviewed::Revise => Command::Reject,
                    Reviewed::Test => match self.test_step(job, state).await {
                        Some(c) => c,
                        None => return self.pause(state, on),
                    },
                };
                self.drive(job, state, command, on).await
            }
        }
    }
}

/// Records (and persists) the plan or review call in flight, or none.
fn asking(state: &mut BuildState, in_flight: Option<Asking>, on: OnChange<'_>) {
    state.asking = in_flight;
    on(state);
}
