//! The session folder `sessions/<version_id>/iteration-<N>/`: every prompt,
//! reply, generated file and report of a build, written as Markdown or as
//! the file itself, for the user to read.

use std::path::{Component, Path};

use super::Engine;
use super::job::{BuildJob, BuildState, TestReport};
use maskflow_llm::{ChatRole, LlmRequest};

impl Engine {
    /// Writes `name` into the folder of the state's iteration.
    pub(super) fn write(
        &self,
        job: &BuildJob,
        state: &BuildState,
        name: &str,
        text: &str,
    ) -> Result<(), String> {
        let path = job
            .session_dir
            .join(format!("iteration-{}", state.iteration.max(1)))
            .join(name);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        }
        std::fs::write(&path, text).map_err(|e| format!("writing {}: {e}", path.display()))
    }
}

/// A plain relative path (no `..`, not absolute), with `/` separators.
pub(super) fn safe_relative(path: &str) -> Option<String> {
    let p = Path::new(path);
    let mut parts = Vec::new();
    for c in p.components() {
        match c {
            Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            _ => return None,
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// A prompt as Markdown, one section per message.
pub fn render(request: &LlmRequest) -> String {
    let mut out = String::new();
    for m in &request.messages {
        let who = match m.role {
            ChatRole::System => "system",
            ChatRole::User => "user",
            ChatRole::Assistant => "assistant",
        };
        out.push_str(&format!("## {who}\n\n{}\n\n", m.content));
    }
    out
}

/// The auto-test's report as Markdown.
pub(super) fn render_report(report: &TestReport) -> String {
    let mut out = format!(
        "# Test report (iteration {})\n\n**{}** — {}\n\n",
        report.iteration, report.status, report.message
    );
    for (field, files) in &report.inputs {
        out.push_str(&format!("- `{field}`: {}\n", files.join(", ")));
    }
    if let Some(env) = &report.environment {
        out.push_str(&format!(
            "\nPython {} environment `{}` ({} bytes): {}\n",
            env.python,
            env.id,
            env.size,
            env.packages.join(", ")
        ));
    }
    if let Some(run) = &report.run {
        out.push_str(&format!(
            "\nExit status: {:?}, {} ms\n\n",
            run.exit_code, run.duration_ms
        ));
        for o in &run.outputs {
            out.push_str(&format!("- output `{}`: {} bytes", o.name, o.size));
            if let Some(n) = o.row_count {
                out.push_str(&format!(", {n} rows"));
            }
            out.push('\n');
        }
        if !run.stderr.is_empty() {
            out.push_str(&format!("\n```\n{}\n```\n", run.stderr));
        }
    }
    out
}
