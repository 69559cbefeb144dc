//! Issue 44, point 6: the commands `docs/` and the README show are real.
//! Every one parses with the clap definitions (the bin's `docs_tests`);
//! here the real binary runs each one that a fresh data folder can answer
//! at once — the extracts of the sample files, every list, the help and
//! the version, a schedule's unit files (`--dry-run`) — from the
//! repository's root, and each must succeed. The ones that start a server,
//! wait for a person or need a workflow built first are run by their own
//! suites (serve, build_cli, schedule_cli, mcp, flows).

#[path = "../../src/docs_lines.rs"]
mod docs_lines;

use std::process::Command;

use crate::common::spawned::BIN;

/// Whether a fresh data folder answers `words` at once.
fn runnable(words: &[String]) -> bool {
    let w: Vec<&str> = words.iter().skip(1).map(String::as_str).collect();
    matches!(
        w.as_slice(),
        ["extract", ..]
            | ["models", "list", ..]
            | ["schedule", "list"]
            | ["flows", "list"]
            | ["--help"]
            | ["--version"]
    )
}

#[test]
fn every_command_the_docs_show_that_a_fresh_data_folder_answers_runs() {
    let repo = docs_lines::repo();
    let shown = docs_lines::documented(&repo);
    let mut ran = 0;
    let mut failed = Vec::new();
    for (file, line) in &shown {
        let words = docs_lines::words(line);
        if !runnable(&words) {
            continue;
        }
        let home = tempfile::tempdir().expect("home");
        let out = Command::new(BIN)
            .args(&words[1..])
            .current_dir(&repo)
            .env("MASKFLOW_HOME", home.path())
            .output()
            .expect("maskflow");
        ran += 1;
        if !out.status.success() {
            failed.push(format!(
                "{file}: `{line}` exited {}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(ran >= 6, "the docs show runnable commands: {shown:?}");
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
