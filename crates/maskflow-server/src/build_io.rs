//! The terminal side of `maskflow build`: reading answers and pasted
//! replies from stdin, and showing the manual back end's prompts so that
//! the user can copy each into any AI tool and paste the reply back. What
//! an LLM wrote (a question, a prompt's assistant turns) is printed with
//! its control characters escaped ([`maskflow_server::terminal`]).

use std::collections::HashSet;
use std::io::{BufRead, Write};

use anyhow::{Context, bail};
use maskflow_core::Service;
use maskflow_llm::ChatRole;
use maskflow_llm::call::ManualWaiter;
use maskflow_llm::manual::ManualPrompt;
use maskflow_server::terminal::{safe, safe_json, safe_line};

/// The line that ends a pasted reply.
pub const END_OF_PASTE: &str = ".";

/// Lines typed on the terminal (or piped in).
pub struct Terminal {
    input: Box<dyn BufRead>,
}

impl Terminal {
    /// Reads from this process's stdin.
    pub fn stdin() -> Self {
        Self {
            input: Box::new(std::io::BufReader::new(std::io::stdin())),
        }
    }

    /// One line after printing `question` (without its line end); an error
    /// when the input ended, naming what was being asked.
    pub fn line(&mut self, question: &str) -> anyhow::Result<String> {
        eprint!("{question} ");
        let _ = std::io::stderr().flush();
        let mut line = String::new();
        let n = self
            .input
            .read_line(&mut line)
            .context("reading the terminal")?;
        if n == 0 {
            bail!("the input ended while asking: {question}");
        }
        Ok(line.trim_end_matches(['\r', '\n']).to_owned())
    }

    /// A yes/no question: `y`/`yes` (any case) is yes, anything else is no.
    pub fn yes(&mut self, question: &str) -> anyhow::Result<bool> {
        let answer = self.line(&format!("{question} [y/N]"))?;
        Ok(matches!(answer.trim().to_lowercase().as_str(), "y" | "yes"))
    }

    /// A pasted reply: lines up to one holding only [`END_OF_PASTE`], or,
    /// when `json` is wanted, up to the first line at which what was pasted
    /// is one whole JSON value (so a pasted object needs no end line).
    pub fn paste(&mut self, json: bool) -> anyhow::Result<String> {
        let mut text = String::new();
        loop {
            let mut line = String::new();
            let n = self
                .input
                .read_line(&mut line)
                .context("reading the pasted reply")?;
            if n == 0 {
                if text.trim().is_empty() {
                    bail!("the input ended before a reply was pasted");
                }
                return Ok(text);
            }
            if line.trim_end_matches(['\r', '\n']) == END_OF_PASTE {
                return Ok(text);
            }
            text.push_str(&line);
            if json && serde_json::from_str::<serde_json::Value>(&text).is_ok() {
                return Ok(text);
            }
        }
    }
}

/// Whether `prompt` waits for work of `workflow_id` (its conversation or
/// its build).
fn is_for(prompt: &ManualPrompt, workflow_id: &str) -> bool {
    prompt.workflow_id.as_deref() == Some(workflow_id)
        || matches!(&prompt.waiter, Some(ManualWaiter::Build { workflow_id: w, .. }) if w == workflow_id)
}

/// Prints one manual prompt as the UI shows it: each message in order,
/// then the schema the reply must match.
fn show(prompt: &ManualPrompt) {
    eprintln!();
    eprintln!(
        "──── manual prompt {} for the {} ────",
        safe_line(&prompt.id),
        safe_line(&prompt.role)
    );
    eprintln!("Copy everything between the rules into your AI tool:");
    eprintln!("────────────────────────────────────────");
    for m in &prompt.messages {
        let who = match m.role {
            ChatRole::System => "system",
            ChatRole::User => "user",
            ChatRole::Assistant => "assistant",
        };
        eprintln!("## {who}\n\n{}\n", safe(&m.content));
    }
    if let Some(schema) = &prompt.schema {
        let text = serde_json::to_string_pretty(schema).unwrap_or_default();
        eprintln!(
            "Answer with JSON only, matching this schema:\n{}",
            safe_json(&text)
        );
    }
    eprintln!("────────────────────────────────────────");
    eprintln!(
        "Paste the reply, then a line holding only \"{END_OF_PASTE}\" (a JSON reply ends by itself):"
    );
}

/// The manual prompts of one workflow, answered on the terminal.
pub struct ManualDesk {
    workflow_id: String,
    answered: HashSet<String>,
}

impl ManualDesk {
    /// For the prompts of `workflow_id`.
    pub fn new(workflow_id: &str) -> Self {
        Self {
            workflow_id: workflow_id.to_owned(),
            answered: HashSet::new(),
        }
    }

    /// Shows each prompt of the workflow waiting in this process and
    /// passes the pasted reply to the service (the same call as the UI's
    /// "Answer"); returns whether any was answered. A reply the service
    /// refuses (empty) is asked for again.
    pub fn answer_waiting(
        &mut self,
        service: &Service,
        term: &mut Terminal,
    ) -> anyhow::Result<bool> {
        let mut any = false;
        for prompt in service.manual_prompts() {
            if !is_for(&prompt, &self.workflow_id)
                || prompt.interrupted.is_some()
                || self.answered.contains(&prompt.id)
            {
                continue;
            }
            show(&prompt);
            loop {
                let text = term.paste(prompt.schema.is_some())?;
                match service.answer_manual(&prompt.id, &text) {
                    Ok(()) => break,
                    Err(e) => {
                        eprintln!("maskflow build: {}; paste it again:", safe(&e.to_string()));
                    }
                }
            }
            eprintln!("maskflow build: reply passed on.");
            self.answered.insert(prompt.id);
            any = true;
        }
        Ok(any)
    }
}

#[cfg(test)]
mod tests {
    use super::Terminal;

    fn term(text: &'static str) -> Terminal {
        Terminal {
            input: Box::new(std::io::Cursor::new(text.as_bytes())),
        }
    }

    #[test]
    fn a_json_reply_ends_by_itself_and_text_at_the_dot() {
        let mut t = term("{\"feasible\":\n true}\nnext\n");
        assert_eq!(t.paste(true).expect("json"), "{\"feasible\":\n true}\n");
        assert_eq!(t.line("?").expect("line"), "next");
        let mut t = term("two\nlines\n.\n");
        assert_eq!(t.paste(false).expect("text"), "two\nlines\n");
        let mut t = term("");
        assert!(t.paste(true).is_err());
        assert!(t.line("which file?").is_err());
    }

    #[test]
    fn only_yes_is_yes() {
        assert!(term("Y\n").yes("send?").expect("yes"));
        assert!(!term("\n").yes("send?").expect("no"));
        assert!(!term("yess\n").yes("send?").expect("no"));
    }
}
