//! Running a script step.

use super::*;
use crate::script::ScriptSource;

impl FlowEngine {
    /// A `script` step: its JSON object on stdout is the output (else the stdout itself).
    pub(super) async fn exec_script(
        &self,
        run: &Loaded,
        cur: usize,
        st: &RunState,
        s: &crate::definition::ScriptStep,
    ) -> StepResult {
        let node = &run.program.nodes[cur];
        let mut next = st.clone();
        let ctx = self.context(run, st);
        let call_id = self.inner.ids.next_id("call");
        let request = json!({"script": s.source.shown()});
        self.announce_tool(run, node, ToolPhase::Request, &call_id, request);
        let output = match self.run_script(run, s, &ctx).await {
            Ok(output) => output,
            Err(e) => {
                let error = json!({"error": e.message});
                self.announce_tool(run, node, ToolPhase::Result, &call_id, error);
                return Err(e.into());
            }
        };
        self.announce_tool(run, node, ToolPhase::Result, &call_id, output.clone());
        let content = output
            .get("stdout")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| output.to_string());
        Self::complete_with(&mut next, node, output, true);
        enter(&run.program, &mut next, node.next);
        let turn = TurnRow {
            role: TurnRole::Assistant,
            content,
            command: meta(run, node, None),
        };
        advance(next, vec![turn], vec![], true)
    }

    pub(super) async fn run_script(
        &self,
        run: &Loaded,
        s: &crate::definition::ScriptStep,
        ctx: &Value,
    ) -> std::result::Result<Value, FlowError> {
        let source = match &s.source {
            // A file of the run's working folder only, links resolved (the
            // definition refused absolute and `..` paths; a link in the
            // folder that leads out is refused here, as file checks do).
            ScriptSource::File(p) => {
                let written = p.to_string_lossy();
                let Some(folder) = &run.working_folder else {
                    return Err(FlowError::script(format!(
                        "the script {written:?} is a file of the run's working folder, and this \
                         run has none: start it with a working folder"
                    )));
                };
                let inside = crate::expr::files::check_relative(&written)
                    .ok()
                    .and_then(|()| crate::expr::files::resolve(folder, &written));
                let Some(file) = inside else {
                    return Err(FlowError::script(format!(
                        "the script {written:?} is not a file inside the run's working folder \
                         {}: put it there (a link that leads out of the folder is not followed)",
                        folder.display()
                    )));
                };
                ScriptSource::File(file)
            }
            // The runner the app installed resolves it: the approved
            // version's script with that version's Python environment.
            ScriptSource::Workflow(wf) => ScriptSource::Workflow(wf.clone()),
        };
        let request = ScriptRequest {
            source,
            args: s
                .args
                .iter()
                .map(|a| template::render(a.as_str(), ctx))
                .collect(),
            working_folder: run.working_folder.clone(),
            timeout: Duration::from_secs(u64::from(s.timeout_seconds.unwrap_or(300))),
        };
        let out = self
            .inner
            .scripts
            .run(&request)
            .await
            .map_err(|e| FlowError::script(e.to_string()))?;
        if out.exit_code != Some(0) {
            let tail: String = out
                .stderr
                .lines()
                .rev()
                .take(5)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join("\n");
            return Err(FlowError::script(format!(
                "the script exited with {}: {tail}",
                out.exit_code
                    .map_or_else(|| "a signal".to_owned(), |c| format!("code {c}"))
            )));
        }
        Ok(match serde_json::from_str::<Value>(out.stdout.trim()) {
            Ok(v @ Value::Object(_)) => v,
            _ => json!({"stdout": out.stdout, "exitCode": 0}),
        })
    }
}
