//! The command line's progress line while a model answers: which role is
//! speaking, how long it has taken and how many pieces of the reply have
//! streamed in (`⠋ agent:critic · 12.4 s · 57 tokens`), redrawn on stderr
//! when stderr is a terminal and cleared before anything else is printed.
//! Driven by the service's events: `llm_call_started` starts it, the
//! call's `ledger_entry` ends it.

use std::io::Write;
use std::time::{Duration, Instant};

use maskflow_core::Event;

const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// How often the line is redrawn.
pub const TICK: Duration = Duration::from_millis(200);

/// The call a model is answering now.
#[derive(Debug, Clone, PartialEq)]
struct Speaking {
    id: String,
    role: String,
    since: Instant,
    pieces: u64,
}

/// The progress line of one command.
#[derive(Debug)]
pub struct Spinner {
    enabled: bool,
    speaking: Option<Speaking>,
    frame: usize,
    drawn: bool,
}

impl Spinner {
    /// A spinner that draws only when `enabled` (stderr is a terminal).
    pub fn new(enabled: bool) -> Self {
        Self {
            enabled,
            speaking: None,
            frame: 0,
            drawn: false,
        }
    }

    /// Follows an event: a call starts, streams or ends.
    pub fn on_event(&mut self, event: &Event, now: Instant) {
        match event {
            Event::LlmCallStarted { id, role, .. } => {
                self.speaking = Some(Speaking {
                    id: id.clone(),
                    role: role.clone(),
                    since: now,
                    pieces: 0,
                });
            }
            Event::AssistantDelta { .. } | Event::MessageDelta { .. } => {
                if let Some(s) = &mut self.speaking {
                    s.pieces += 1;
                }
            }
            Event::LedgerEntry { entry }
                if self.speaking.as_ref().is_some_and(|s| s.id == entry.id) =>
            {
                self.speaking = None;
                self.clear();
            }
            _ => {}
        }
    }

    /// The line for the call in flight at `now`, if any.
    pub fn line(&self, now: Instant) -> Option<String> {
        let s = self.speaking.as_ref()?;
        let secs = now.saturating_duration_since(s.since).as_secs_f64();
        let frame = FRAMES[self.frame % FRAMES.len()];
        let unit = if s.pieces == 1 { "token" } else { "tokens" };
        Some(format!(
            "{frame} {} · {secs:.1} s · {} {unit} (Ctrl-C stops)",
            crate::terminal::safe_line(&s.role),
            s.pieces
        ))
    }

    /// Redraws the line (a tick).
    pub fn draw(&mut self, now: Instant) {
        self.frame += 1;
        if !self.enabled {
            return;
        }
        if let Some(line) = self.line(now) {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K{line}");
            let _ = err.flush();
            self.drawn = true;
        }
    }

    /// Clears the line so other output starts at the margin.
    pub fn clear(&mut self) {
        if self.enabled && self.drawn {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
            self.drawn = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn started(id: &str) -> Event {
        Event::LlmCallStarted {
            id: id.into(),
            role: "agent:critic".into(),
            model: "m".into(),
            workflow_id: None,
            flow_run_id: None,
        }
    }

    #[test]
    fn the_line_names_the_role_the_time_and_the_pieces_until_the_call_ends() {
        let t0 = Instant::now();
        let mut s = Spinner::new(false);
        assert_eq!(s.line(t0), None);
        s.on_event(&started("call_1"), t0);
        for _ in 0..3 {
            s.on_event(
                &Event::AssistantDelta {
                    conversation_id: "flow_1".into(),
                    inflight_id: None,
                    delta: "x".into(),
                },
                t0,
            );
        }
        let line = s.line(t0 + Duration::from_millis(2500)).expect("line");
        assert!(
            line.ends_with("agent:critic · 2.5 s · 3 tokens (Ctrl-C stops)"),
            "{line}"
        );
        let entry = maskflow_privacy::ledger::LedgerEntry {
            id: "call_1".into(),
            created_at: String::new(),
            role: "agent:critic".into(),
            provider: "openai".into(),
            model: "m".into(),
            workflow_id: None,
            url: None,
            request_body: String::new(),
            reply: None,
            input_tokens: None,
            output_tokens: None,
            latency_ms: 0,
            outcome: maskflow_privacy::CallOutcome::Ok,
            blocked: false,
            error: None,
            deleted_workflow: None,
            flow_run_id: None,
            flow_step: None,
            local: false,
            note: None,
        };
        let mut other = entry.clone();
        other.id = "call_0".into();
        s.on_event(&Event::LedgerEntry { entry: other }, t0);
        assert!(s.line(t0).is_some(), "another call's end does not stop it");
        s.on_event(&Event::LedgerEntry { entry }, t0);
        assert_eq!(s.line(t0), None);
    }
}
