//! What `maskflow flows resume` prints before the run goes on (seed 002's
//! `ResumeContext`, seed 004's resume): a single step's retry that is due,
//! shown before it runs (as the HTTP view and the Flows page show it), the
//! steps done with their times, a fan-out's counts and the last output.
//! Pure: the caller prints the lines (through `terminal::safe_line`).

use maskflow_flows::{ResumeContext, RetryDue};

/// Longest last output shown, in characters.
const OUTPUT_CHARS: usize = 300;

/// The lines, each starting with `resume` or `retry due`.
pub fn resume_lines(retry_due: Option<&RetryDue>, resume: &ResumeContext) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(r) = retry_due {
        let told = if r.feedback.is_empty() {
            String::new()
        } else {
            format!("; it is told: {}", r.feedback)
        };
        lines.push(format!("retry due: {}{told}", r.message));
    }
    match resume
        .completed_steps
        .iter()
        .max_by(|a, b| a.completed_at.cmp(&b.completed_at))
    {
        None => lines.push("resume: no step completed yet".into()),
        Some(last) => lines.push(format!(
            "resume: {} step(s) completed; the last, {:?} {:?}, at {}",
            resume.completed_steps.len(),
            last.label,
            last.step_path,
            last.completed_at
        )),
    }
    if let Some(f) = &resume.fan_out {
        lines.push(format!(
            "resume: fan-out {:?}: {} items, {} completed, {} failed, {} to run",
            f.step, f.total, f.completed, f.failed, f.remaining
        ));
    }
    if resume.last_output_local {
        lines.push("resume: the last output holds local data (see the transcript)".into());
    } else if !resume.last_output.is_null() {
        let text = resume.last_output.to_string();
        let cut: String = text.chars().take(OUTPUT_CHARS).collect();
        let more = if cut.len() < text.len() { "…" } else { "" };
        lines.push(format!("resume: last output {cut}{more}"));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use maskflow_flows::FanOutSummary;
    use maskflow_flows::state::CompletedStep;
    use serde_json::json;

    #[test]
    fn a_due_retry_and_the_fan_out_are_shown_before_the_run_goes_on() {
        let due = RetryDue {
            step: "Check".into(),
            step_path: vec![1],
            attempt: 2,
            of: 2,
            feedback: "say ok".into(),
            message: "step \"Check\" will be retried (attempt 2 of 2)".into(),
        };
        let resume = ResumeContext {
            completed_steps: vec![CompletedStep {
                step_path: vec![0],
                label: "Fetch".into(),
                completed_at: "2026-01-01T00:00:00.000Z".into(),
                times: 1,
            }],
            last_output: json!({"files": 3}),
            last_output_local: false,
            fan_out: Some(FanOutSummary {
                step: "Review".into(),
                step_path: vec![2],
                total: 3,
                completed: 1,
                failed: 1,
                remaining: 1,
            }),
        };
        assert_eq!(
            resume_lines(Some(&due), &resume),
            [
                "retry due: step \"Check\" will be retried (attempt 2 of 2); it is told: say ok",
                "resume: 1 step(s) completed; the last, \"Fetch\" [0], at 2026-01-01T00:00:00.000Z",
                "resume: fan-out \"Review\": 3 items, 1 completed, 1 failed, 1 to run",
                "resume: last output {\"files\":3}",
            ]
        );
        let local = ResumeContext {
            last_output: serde_json::Value::Null,
            last_output_local: true,
            ..ResumeContext::default()
        };
        assert_eq!(
            resume_lines(None, &local),
            [
                "resume: no step completed yet",
                "resume: the last output holds local data (see the transcript)"
            ]
        );
    }
}
