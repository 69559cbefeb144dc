//! The manual prompts of the flow runs a client drives: a run whose agent
//! uses the manual back end waits for an answer pasted by a person; an MCP
//! client may read that prompt (it passed the guard when it was made, and
//! passes it again as any answer does) and answer it.

use maskflow_llm::ChatRole;
use maskflow_llm::call::ManualWaiter;
use serde_json::{Value, json};

use super::Service;
use super::clients::{Answer, ClientContext, ClientReply};
use crate::error::{CoreError, Result};

impl Service {
    /// The manual prompts a flow run waits on, as a client sees them, and
    /// the texts in them that came from the LLM (its own earlier replies).
    pub(super) fn client_run_prompts(&self, run_id: &str) -> (Vec<Value>, Vec<String>) {
        let mut own = Vec::new();
        let prompts = self
            .manual_prompts()
            .into_iter()
            .filter(|p| matches!(&p.waiter, Some(ManualWaiter::FlowRun { run_id: r }) if r == run_id))
            .map(|p| {
                own.push(p.id.clone());
                for m in p.messages.iter().filter(|m| m.role == ChatRole::Assistant) {
                    own.push(m.content.clone());
                }
                json!({"prompt_id": p.id, "role": p.role, "messages": p.messages, "schema": p.schema})
            })
            .collect();
        (prompts, own)
    }

    /// Answers a manual prompt of a flow run (the client speaks for the AI tool).
    pub fn client_answer_prompt(
        &self,
        ctx: &ClientContext,
        prompt_id: &str,
        text: &str,
    ) -> ClientReply {
        let answer = (|| -> Result<Answer> {
            let prompt = self
                .manual_prompts()
                .into_iter()
                .find(|p| p.id == prompt_id)
                .ok_or_else(|| CoreError::not_found("manual prompt", prompt_id))?;
            let Some(ManualWaiter::FlowRun { run_id }) = prompt.waiter else {
                return Err(CoreError::InvalidRequest(format!(
                    "manual prompt {prompt_id} is not a flow run's: answer it in Maskflow"
                )));
            };
            self.answer_manual(prompt_id, text)?;
            let mut a = Answer::new(json!({"status": "answered", "prompt_id": prompt_id}))
                .own([prompt_id.to_owned()]);
            a.flow_run_id = Some(run_id);
            Ok(a)
        })();
        self.deliver(ctx, "answer_prompt", answer)
    }
}
