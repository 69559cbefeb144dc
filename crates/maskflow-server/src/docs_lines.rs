//! The commands the documentation shows: every `maskflow …` line of a
//! ```sh block in the README and `docs/*.md`, split into words as a shell
//! would. Shared by the bin's docs tests (they parse each with the clap
//! definitions) and `tests/it/docs_commands.rs` (it runs the ones a fresh
//! data folder can).
#![allow(dead_code)] // each user takes what it needs

use std::path::{Path, PathBuf};

/// The repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The words of a shell line, with '…' and "…" quoting, up to an
/// unquoted `#` (a comment).
pub fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == c {
                        break;
                    }
                    word.push(q);
                }
            }
            '#' if !in_word => break,
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        out.push(word);
    }
    out
}

/// Every `maskflow …` line of a ```sh block in `text`.
pub fn shown_commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_sh = false;
    for line in text.lines() {
        let t = line.trim();
        if let Some(lang) = t.strip_prefix("```") {
            in_sh = !in_sh && (lang == "sh" || lang == "bash" || lang == "shell");
            continue;
        }
        let t = t.strip_prefix("$ ").unwrap_or(t);
        if in_sh && t.starts_with("maskflow ") {
            out.push(t.to_owned());
        }
    }
    out
}

/// Every command shown in the README and `docs/*.md`: (file name, line).
pub fn documented(repo: &Path) -> Vec<(String, String)> {
    let mut files = vec![repo.join("README.md")];
    if let Ok(dir) = std::fs::read_dir(repo.join("docs")) {
        let mut pages: Vec<PathBuf> = dir
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .collect();
        pages.sort();
        files.extend(pages);
    }
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.extend(shown_commands(&text).into_iter().map(|c| (name.clone(), c)));
    }
    out
}
