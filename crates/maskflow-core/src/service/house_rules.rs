//! Where house rules come from (seed 001's `StandardsProvider`): the text
//! kept in Settings (`house_rules` in the settings table) and the Markdown
//! files in `<data folder>/house-rules/`, merged in that order (files by
//! name). A file whose name starts with `_` is only for `{{include:…}}`.
//! The pure parts (includes, scopes, matching) are in
//! [`crate::conversation::house_rules`]; this module reads the sources.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::Service;
use crate::conversation::house_rules::{self, HouseRules, IncludeError, Section};
use crate::error::{CoreError, Result};
use crate::store;

/// The settings key of the Settings text.
pub const HOUSE_RULES_SETTING: &str = "house_rules";
/// The folder, under the data folder, of the house-rules files.
pub const HOUSE_RULES_DIR: &str = "house-rules";
/// The longest Settings text, in characters.
pub const MAX_TEXT_CHARS: usize = 100_000;
/// The largest house-rules file read, in bytes.
pub const MAX_FILE_BYTES: u64 = 256 * 1024;
/// How the Settings text is named in an include chain (no file can be named so).
const SETTINGS_SOURCE: &str = "the Settings text";

/// `PUT /api/settings/house-rules`'s body.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct HouseRulesInput {
    /// The Markdown text; headings name scopes.
    pub text: String,
}

/// One file of the house-rules folder.
#[derive(Serialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
pub struct HouseRulesFile {
    /// The name `{{include:NAME}}` uses (the file name without `.md`).
    pub name: String,
    /// Whether it is only for includes (its name starts with `_`).
    pub include_only: bool,
    /// Its sections' scopes, in order (empty for an include-only file).
    pub scopes: Vec<String>,
    /// Why it cannot be used, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The house rules, for the settings screen.
#[derive(Serialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
pub struct HouseRulesView {
    /// The Settings text.
    pub text: String,
    /// The Settings text's scopes, in order.
    pub scopes: Vec<String>,
    /// The folder of the house-rules files.
    pub folder: String,
    /// The files found there, by name.
    pub files: Vec<HouseRulesFile>,
}

/// The folder's files: name → text (or why it cannot be read).
type Templates = BTreeMap<String, std::result::Result<String, String>>;

fn read_folder(dir: &Path) -> Templates {
    let mut out = Templates::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out; // No folder: no files.
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("md") || !path.is_file() {
            continue;
        }
        let Some(name) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        out.insert(name.to_owned(), read_file(&path));
    }
    out
}

fn read_file(path: &Path) -> std::result::Result<String, String> {
    let shown = path.display();
    let size = std::fs::metadata(path)
        .map_err(|e| format!("{shown} cannot be read: {e}"))?
        .len();
    if size > MAX_FILE_BYTES {
        return Err(format!(
            "{shown} is {} KiB; house-rules files are read up to {} KiB",
            size / 1024,
            MAX_FILE_BYTES / 1024
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("{shown} cannot be read: {e}"))?;
    String::from_utf8(bytes).map_err(|_| format!("{shown} is not UTF-8 text"))
}

/// The readable files, for includes.
fn readable(templates: &Templates) -> BTreeMap<String, String> {
    templates
        .iter()
        .filter_map(|(k, v)| v.as_ref().ok().map(|t| (k.clone(), t.clone())))
        .collect()
}

/// The sections of one source, its includes expanded.
fn sections_of(
    text: &str,
    source: &str,
    shown: &str,
    templates: &Templates,
) -> std::result::Result<Vec<Section>, String> {
    let expanded =
        house_rules::expand_includes(text, source, &readable(templates)).map_err(|e| match &e {
            // An include of an unreadable file says why it is unreadable.
            IncludeError::Missing { name, .. } => match templates.get(name) {
                Some(Err(why)) => format!("house rules: {why}"),
                _ => e.to_string(),
            },
            _ => e.to_string(),
        })?;
    Ok(house_rules::parse(&expanded, shown))
}

fn scopes(sections: &[Section]) -> Vec<String> {
    sections.iter().map(|s| s.scope.clone()).collect()
}

impl Service {
    fn house_rules_dir(&self) -> PathBuf {
        self.home().join(HOUSE_RULES_DIR)
    }

    fn house_rules_text(&self) -> Result<String> {
        match store::settings::get(&self.db(), HOUSE_RULES_SETTING)? {
            None => Ok(String::new()),
            Some(t) => serde_json::from_str::<HouseRulesInput>(&t)
                .map(|i| i.text)
                .map_err(|e| CoreError::Corrupt(format!("the house rules setting: {e}"))),
        }
    }

    /// Every section of the user's house rules, the Settings text first;
    /// a missing include, a cycle or an unreadable file is an error that
    /// names it (a build then fails with it rather than ignore the rules).
    pub(super) fn house_rules_bundle(&self) -> Result<HouseRules> {
        let templates = read_folder(&self.house_rules_dir());
        let text = self.house_rules_text()?;
        let mut sections = sections_of(&text, SETTINGS_SOURCE, "Settings", &templates)
            .map_err(CoreError::InvalidRequest)?;
        for (name, body) in templates.iter().filter(|(n, _)| !n.starts_with('_')) {
            let body = body
                .as_ref()
                .map_err(|why| CoreError::InvalidRequest(format!("house rules: {why}")))?;
            let shown = format!("{HOUSE_RULES_DIR}/{name}.md");
            sections.extend(
                sections_of(body, name, &shown, &templates).map_err(CoreError::InvalidRequest)?,
            );
        }
        Ok(HouseRules { sections })
    }

    /// The house rules: the Settings text and the folder's files.
    pub fn house_rules(&self) -> Result<HouseRulesView> {
        let text = self.house_rules_text()?;
        let templates = read_folder(&self.house_rules_dir());
        let files = templates
            .iter()
            .map(|(name, body)| {
                let include_only = name.starts_with('_');
                let parsed = body.as_ref().map_err(Clone::clone).and_then(|b| {
                    sections_of(b, name, name, &templates)
                        .map(|s| if include_only { Vec::new() } else { scopes(&s) })
                });
                HouseRulesFile {
                    name: name.clone(),
                    include_only,
                    scopes: parsed.clone().unwrap_or_default(),
                    error: parsed.err(),
                }
            })
            .collect();
        let text_scopes = sections_of(&text, SETTINGS_SOURCE, "Settings", &templates)
            .map(|s| scopes(&s))
            .unwrap_or_default();
        Ok(HouseRulesView {
            text,
            scopes: text_scopes,
            folder: self.house_rules_dir().display().to_string(),
            files,
        })
    }

    /// Replaces the Settings text; refused (400) when it is too long or its
    /// includes cannot be expanded (a missing file, a cycle).
    pub fn set_house_rules(&self, input: HouseRulesInput) -> Result<HouseRulesView> {
        let chars = input.text.chars().count();
        if chars > MAX_TEXT_CHARS {
            return Err(CoreError::InvalidRequest(format!(
                "the house rules are {chars} characters long; the most is {MAX_TEXT_CHARS}"
            )));
        }
        let templates = read_folder(&self.house_rules_dir());
        sections_of(&input.text, SETTINGS_SOURCE, "Settings", &templates)
            .map_err(CoreError::InvalidRequest)?;
        let value = serde_json::to_string(&input).map_err(|e| CoreError::Corrupt(e.to_string()))?;
        let now = self.now();
        store::settings::put(&self.db(), HOUSE_RULES_SETTING, &value, &now)?;
        self.house_rules()
    }
}

#[cfg(test)]
#[path = "house_rules_tests.rs"]
mod tests;
