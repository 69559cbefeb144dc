//! The command line's documentation cannot drift from its definitions
//! (issue 44, point 6): `docs/cli.md` is generated from the clap commands
//! (`UPDATE_DOCS=1 cargo test -p maskflow-server --bin maskflow docs`
//! rewrites it; otherwise a difference fails), and every `maskflow …` line
//! of a `sh` block in `docs/` and the README parses with those commands.
//! `tests/it/docs_commands.rs` runs the ones a fresh data folder can.

use std::path::PathBuf;

use clap::{CommandFactory, Parser};

use super::Cli;
use super::docs_lines::{documented, shown_commands, words};

fn repo() -> PathBuf {
    super::docs_lines::repo()
}

/// Each command's long help, the root first, then its subcommands in order.
fn reference(cmd: &clap::Command, depth: usize, out: &mut String) {
    let name = cmd.get_bin_name().unwrap_or(cmd.get_name()).to_owned();
    let mut cmd = cmd.clone();
    let help = cmd.render_long_help().to_string();
    out.push_str(&format!(
        "{} `{name}`\n\n```text\n{}\n```\n\n",
        "#".repeat(depth.min(4) + 1),
        help.trim_end()
    ));
    for sub in cmd.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        reference(sub, depth + 1, out);
    }
}

/// The whole reference page.
fn cli_reference() -> String {
    let mut cmd = Cli::command();
    cmd.build();
    let mut out = String::from(
        "# The command line: `maskflow`\n\n\
         <!-- Generated from the clap definitions by \
         `UPDATE_DOCS=1 cargo test -p maskflow-server --bin maskflow docs`; do not edit. -->\n\n\
         Every command and flag, as `maskflow <command> --help` prints it. \
         How they fit together: [the command line](command-line.md).\n\n",
    );
    reference(&cmd, 0, &mut out);
    out.trim_end().to_owned() + "\n"
}

#[test]
fn docs_cli_md_is_the_generated_reference() {
    let path = repo().join("docs/cli.md");
    let want = cli_reference();
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, &want).expect("writing docs/cli.md");
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/cli.md differs from the command definitions: regenerate it with \
         `UPDATE_DOCS=1 cargo test -p maskflow-server --bin maskflow docs`"
    );
}

#[test]
fn every_command_the_docs_show_parses_with_the_real_definitions() {
    let shown = documented(&repo());
    assert!(shown.len() >= 10, "the docs show commands: {shown:?}");
    let mut wrong = Vec::new();
    for (file, line) in &shown {
        match Cli::try_parse_from(words(line)) {
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
                ) => {}
            Err(e) => wrong.push(format!("{file}: `{line}`: {}", e.render())),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn shell_words_and_blocks_are_read_as_a_shell_would() {
    assert_eq!(
        words(r#"maskflow schedule add "weekly sales" --cron '0 7 * * 1'  # a comment"#),
        [
            "maskflow",
            "schedule",
            "add",
            "weekly sales",
            "--cron",
            "0 7 * * 1"
        ]
    );
    let text = "```sh\nmaskflow serve --open\nls\n```\n```json\nmaskflow x\n```\n";
    assert_eq!(shown_commands(text), ["maskflow serve --open"]);
    // A wrong flag is caught.
    assert!(Cli::try_parse_from(words("maskflow serve --no-such-flag")).is_err());
}
