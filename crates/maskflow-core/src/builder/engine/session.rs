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
        out.push_str(&format!("\n{}\n\n", how_it_ended(run)));
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

/// How a test run ended, as a person says it: "The script exited with
/// status 0 (success) after 1.2 s." — never Rust's `Some(0)`.
fn how_it_ended(run: &maskflow_runner::RunResult) -> String {
    let took = if run.duration_ms < 1000 {
        format!("{} ms", run.duration_ms)
    } else {
        format!("{:.1} s", run.duration_ms as f64 / 1000.0)
    };
    match (run.exit_code, run.signal) {
        (Some(0), _) => format!("The script exited with status 0 (success) after {took}."),
        (Some(code), _) => format!("The script exited with status {code} (an error) after {took}."),
        (None, Some(signal)) => format!("The script was stopped by signal {signal} after {took}."),
        (None, None) => format!(
            "The script did not finish: {} (after {took}).",
            run.message.trim().trim_end_matches('.')
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::how_it_ended;
    use maskflow_runner::{RunResult, RunStatus};

    fn run(exit_code: Option<i32>, signal: Option<i32>, duration_ms: u64) -> RunResult {
        RunResult {
            status: RunStatus::Succeeded,
            message: "the script ran past its 60 s limit".into(),
            exit_code,
            signal,
            duration_ms,
            stdout: String::new(),
            stderr: String::new(),
            truncated: false,
            outputs: Vec::new(),
            refused_outputs: Vec::new(),
            limits: Vec::new(),
            network_isolated: true,
            isolated: true,
        }
    }

    #[test]
    fn the_report_says_how_the_script_ended_in_words() {
        // Regression (#28): the report printed "Exit status: Some(0), 5 ms".
        let ok = how_it_ended(&run(Some(0), None, 5));
        assert_eq!(ok, "The script exited with status 0 (success) after 5 ms.");
        assert_eq!(
            how_it_ended(&run(Some(1), None, 1340)),
            "The script exited with status 1 (an error) after 1.3 s."
        );
        assert_eq!(
            how_it_ended(&run(None, Some(9), 40)),
            "The script was stopped by signal 9 after 40 ms."
        );
        assert_eq!(
            how_it_ended(&run(None, None, 60_000)),
            "The script did not finish: the script ran past its 60 s limit (after 60.0 s)."
        );
        assert!(!ok.contains("Some("), "{ok}");
    }
}
