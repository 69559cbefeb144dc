//! The model manager (issue 32): GGUF models for the embedded back end,
//! kept under `<data>/models/` and counted in Storage. A short list of
//! recommended models with their size, memory need and speed here; pulls
//! with progress, resume and a SHA-256 check (`models/pull.rs`); any GGUF
//! file picked on disk; `use`, which points the `local` back end at a
//! model; and the first start's choice between a local model, a cloud API
//! and manual.
//!
//! The contract with the embedded back end is only its setting: a back end
//! of kind `local`, id `local`, whose `model` is the GGUF file's absolute
//! path. Nothing of a user's files is involved here: the only network
//! calls are the downloads of the URLs listed or given.

mod catalog;
mod download;
pub(super) mod gguf;
mod manifest;
mod pull;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::Service;
use crate::error::{CoreError, Result};
use crate::store;
use maskflow_llm::config::{LlmSettings, ProviderConfig, REQUIRED_ROLES};

pub use catalog::CATALOG;
pub use manifest::{InstalledModel, ModelSource, ModelSpeed};
pub(super) use pull::Downloads;
pub use pull::PullModel;

/// The id of the embedded back end's setting that `use` writes.
pub const LOCAL_ID: &str = "local";
/// Its kind, as the settings document spells it.
pub const LOCAL_KIND: &str = "local";
/// The settings key of the first start's choice.
const FIRST_START_KEY: &str = "first_start_choice";

/// The models as Settings and `maskflow models list` show them.
#[derive(Serialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
pub struct ModelsView {
    /// Where models are kept.
    pub folder: String,
    /// This machine's memory, when known.
    #[ts(type = "number | null")]
    pub total_memory_bytes: Option<u64>,
    /// Whether this Maskflow has the embedded back end (the `local` kind).
    pub local_backend: bool,
    /// The installed model the `local` back end uses, if any.
    pub in_use: Option<String>,
    /// No back end was chosen yet and the first start's choice was not made
    /// (false while the back ends are forced, as by `--replay`).
    pub first_start: bool,
    /// The recommended model for this machine's memory, if one fits.
    pub recommended: Option<String>,
    /// Installed models.
    pub installed: Vec<InstalledModel>,
    /// The recommended list.
    pub catalog: Vec<CatalogEntry>,
    /// Downloads in progress.
    pub downloads: Vec<DownloadView>,
}

/// One model of the recommended list.
#[derive(Serialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
pub struct CatalogEntry {
    /// Its name (`maskflow models pull NAME`).
    pub name: String,
    /// What to call it.
    pub title: String,
    /// Why it is listed.
    pub note: String,
    /// Where it downloads from.
    pub url: String,
    /// Its size in bytes.
    #[ts(type = "number")]
    pub bytes: u64,
    /// The SHA-256 it must have: published, or recorded at its first download.
    pub sha256: Option<String>,
    /// Memory it needs loaded, estimated.
    #[ts(type = "number")]
    pub memory_bytes: u64,
    /// Whether it fits in half of this machine's memory (unknown: true).
    pub fits: bool,
    /// Whether it is installed.
    pub installed: bool,
    /// Tokens per second expected here: measured, or estimated from a
    /// measured model's speed by size; none until a model was measured.
    pub expected_tokens_per_second: Option<f64>,
    /// Where the speed comes from, in words.
    pub speed_note: String,
}

/// A download in progress.
#[derive(Serialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
pub struct DownloadView {
    /// The model's name.
    pub name: String,
    /// Bytes so far.
    #[ts(type = "number")]
    pub done: u64,
    /// Bytes in all, when known.
    #[ts(type = "number | null")]
    pub total: Option<u64>,
}

/// A GGUF file on disk to add.
#[derive(Deserialize, Serialize, Clone, Debug, ToSchema, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct AddModelFile {
    /// The file's path on this machine.
    pub path: String,
    /// The name to give it (default: the file's name without `.gguf`).
    #[serde(default)]
    #[ts(optional)]
    pub name: Option<String>,
}

/// The first start's choice.
#[derive(Deserialize, Serialize, Clone, Copy, Debug, PartialEq, Eq, ToSchema, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum StartChoice {
    /// A model on this machine (the UI then pulls the recommended one).
    Local,
    /// A cloud API (the UI then opens the back ends in Settings).
    Cloud,
    /// Paste prompts into any AI tool (the default, stored as chosen).
    Manual,
}

/// `POST /api/models/first-start`'s body.
#[derive(Deserialize, Serialize, Clone, Debug, ToSchema, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct FirstStartInput {
    /// What the user chose.
    pub choice: StartChoice,
}

/// Names the API's own paths use (`/api/models/pull`, …).
const RESERVED: [&str; 3] = ["pull", "file", "first-start"];

/// A model name: 1–64 of `a-z A-Z 0-9 . _ -`, not starting with a dot,
/// and not one of the API's own path segments.
pub fn check_name(name: &str) -> Result<()> {
    let ok = !RESERVED.contains(&name)
        && !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(CoreError::InvalidRequest(format!(
            "model name {name:?} must be 1–64 letters, digits, '.', '_' or '-', not starting \
             with '.', and not pull, file or first-start"
        )))
    }
}

/// Whether this build can run the `local` kind (the embedded back end is
/// compiled in); without it, "Use" would point at a back end that only errs.
pub fn local_kind_known() -> bool {
    maskflow_llm::config::ProviderKind::parse(LOCAL_KIND).is_some()
        && maskflow_llm::local::capabilities().supported
}

/// The setting `use` writes: the `local` back end on `path`. Refused by a
/// build without the embedded back end: the kind parses everywhere (a
/// settings file moves between builds), but only such a build can run it.
fn local_setting(path: &Path) -> Result<ProviderConfig> {
    let without = || {
        CoreError::Conflict(
            "this Maskflow was built without the embedded back end (the `local` kind); \
             use a build with it, or serve the model with llama-server and add it as an \
             OpenAI-compatible back end"
                .into(),
        )
    };
    if !local_kind_known() {
        return Err(without());
    }
    serde_json::from_value(serde_json::json!({
        "id": LOCAL_ID,
        "kind": LOCAL_KIND,
        "model": path.display().to_string(),
    }))
    .map_err(|_| without())
}

/// This machine's memory in bytes, when the system says.
pub fn total_memory() -> Option<u64> {
    if cfg!(target_os = "linux") {
        let text = std::fs::read_to_string("/proc/meminfo").ok()?;
        let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        return Some(kb * 1024);
    }
    if cfg!(target_os = "macos") {
        let out = std::process::Command::new("sysctl")
            .args(["-n", "hw.memsize"])
            .output()
            .ok()?;
        return String::from_utf8_lossy(&out.stdout).trim().parse().ok();
    }
    None
}

impl Service {
    /// The models folder.
    pub fn models_folder(&self) -> PathBuf {
        manifest::folder(self.home())
    }

    /// The path of an installed model's file, absolute.
    fn model_path(&self, model: &InstalledModel) -> PathBuf {
        let path = self.models_folder().join(&model.file);
        std::path::absolute(&path).unwrap_or(path)
    }

    /// The models folder as the installed models' records name it (absolute).
    pub(super) fn known_models_folder(&self) -> PathBuf {
        let folder = self.models_folder();
        std::path::absolute(&folder).unwrap_or(folder)
    }

    /// The installed models' records, which the embedded engine checks
    /// their files against before loading (an unreadable record: none).
    pub(super) fn known_models(&self) -> Vec<maskflow_llm::local::KnownModel> {
        manifest::read(self.home())
            .unwrap_or_default()
            .iter()
            .map(|m| maskflow_llm::local::KnownModel {
                path: self.model_path(m),
                sha256: m.sha256.clone(),
                bytes: m.bytes,
                modified_ms: m.modified_ms,
            })
            .collect()
    }

    /// The installed models, the recommended list and the downloads.
    pub fn models(&self) -> Result<ModelsView> {
        let installed = manifest::read(self.home())?;
        let seen = manifest::seen_checksums(self.home())?;
        let total = total_memory();
        let settings = crate::settings::load(&self.db())?;
        let local_model = settings
            .providers
            .iter()
            .find(|p| p.id == LOCAL_ID && p.kind.as_str() == LOCAL_KIND)
            .and_then(|p| p.model.clone());
        let in_use = installed
            .iter()
            .find(|m| Some(self.model_path(m).display().to_string()) == local_model)
            .map(|m| m.name.clone());
        // A measured model's speed, scaled by size, stands for the others:
        // generation on a CPU is bound by reading the weights.
        let measured = installed
            .iter()
            .filter_map(|m| m.speed.as_ref().map(|s| (m, s.tokens_per_second)))
            .max_by(|a, b| a.0.bytes.cmp(&b.0.bytes));
        let catalog = CATALOG
            .iter()
            .map(|c| {
                let mine = installed.iter().find(|m| m.name == c.name);
                let (speed, note) = match (mine.and_then(|m| m.speed.as_ref()), measured) {
                    (Some(s), _) => (Some(s.tokens_per_second), "measured here".to_owned()),
                    (None, Some((m, tps))) if c.bytes > 0 => (
                        Some(tps * m.bytes as f64 / c.bytes as f64),
                        format!("estimated from {}'s measured speed", m.name),
                    ),
                    _ => (None, "not measured yet".to_owned()),
                };
                CatalogEntry {
                    name: c.name.to_owned(),
                    title: c.title.to_owned(),
                    note: c.note.to_owned(),
                    url: c.url.to_owned(),
                    bytes: c.bytes,
                    sha256: c
                        .sha256
                        .map(str::to_owned)
                        .or_else(|| seen.get(c.url).cloned()),
                    memory_bytes: c.memory_bytes(),
                    fits: total.is_none_or(|t| c.memory_bytes().saturating_mul(2) <= t),
                    installed: mine.is_some(),
                    expected_tokens_per_second: speed,
                    speed_note: note,
                }
            })
            .collect();
        Ok(ModelsView {
            folder: self.models_folder().display().to_string(),
            total_memory_bytes: total,
            local_backend: local_kind_known(),
            in_use,
            first_start: self.is_first_start()?,
            recommended: catalog::recommended_for(total).map(|m| m.name.to_owned()),
            installed,
            catalog,
            downloads: self.inner.models.list(),
        })
    }

    /// No back end was ever saved and the first start's choice not made
    /// (a service whose back ends are forced, as by `--replay`, is past it).
    fn is_first_start(&self) -> Result<bool> {
        if self.providers_overridden() {
            return Ok(false);
        }
        let db = self.db();
        Ok(
            store::settings::get(&db, crate::settings::SETTINGS_KEY)?.is_none()
                && store::settings::get(&db, FIRST_START_KEY)?.is_none(),
        )
    }

    /// Records the first start's choice; `manual` also stores the default
    /// settings (manual for every role) as chosen.
    pub fn first_start_choice(&self, input: FirstStartInput) -> Result<ModelsView> {
        let now = self.now();
        {
            let db = self.db();
            let choice = serde_json::to_string(&input.choice)
                .map_err(|e| CoreError::Corrupt(e.to_string()))?;
            store::settings::put(&db, FIRST_START_KEY, &choice, &now)?;
            if input.choice == StartChoice::Manual
                && store::settings::get(&db, crate::settings::SETTINGS_KEY)?.is_none()
            {
                crate::settings::save(&db, &LlmSettings::default(), &now)?;
            }
        }
        self.models()
    }

    /// Points the `local` back end at an installed model and gives it the
    /// builder's roles (validator, clarifier, builder); other roles keep
    /// theirs.
    pub fn use_model(&self, name: &str) -> Result<ModelsView> {
        let model = self.installed_model(name)?;
        let path = self.model_path(&model);
        if !path.is_file() {
            return Err(CoreError::Conflict(format!(
                "the file of model {name} is missing ({}); remove it and pull it again",
                path.display()
            )));
        }
        let setting = local_setting(&path)?;
        let now = self.now();
        {
            let db = self.db();
            let mut settings = crate::settings::load(&db)?;
            settings.providers.retain(|p| p.id != LOCAL_ID);
            settings.providers.insert(0, setting);
            for role in REQUIRED_ROLES {
                settings.roles.insert(role.to_owned(), LOCAL_ID.to_owned());
            }
            crate::settings::save(&db, &settings, &now)?;
        }
        self.reload_providers()?;
        self.models()
    }

    /// Removes an installed model (refused while the `local` back end uses
    /// it), or the partial download of one.
    pub fn remove_model(&self, name: &str) -> Result<ModelsView> {
        check_name(name)?;
        if self.inner.models.is_running(name) {
            return Err(CoreError::Conflict(format!(
                "model {name} is downloading; cancel the download first"
            )));
        }
        let _write = self.inner.models.write_lock();
        let mut installed = manifest::read(self.home())?;
        let Some(at) = installed.iter().position(|m| m.name == name) else {
            // A cancelled or interrupted download leaves a `.part` to resume.
            if let Some(part) = self.part_of(name).filter(|p| p.exists()) {
                std::fs::remove_file(&part)
                    .map_err(|e| CoreError::io(format!("removing {}", part.display()), e))?;
                drop(_write);
                return self.models();
            }
            return Err(CoreError::not_found("model", name));
        };
        let view = self.models()?;
        if view.in_use.as_deref() == Some(name) {
            return Err(CoreError::Conflict(format!(
                "model {name} is the one the local back end uses; use another model or \
                 change the back end in Settings first"
            )));
        }
        let model = installed.remove(at);
        let path = self.models_folder().join(&model.file);
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(CoreError::io(format!("removing {}", path.display()), e)),
        }
        manifest::write(self.home(), &installed)?;
        drop(_write);
        self.models()
    }

    /// Adds a GGUF file from disk: checked by its header, then hard-linked
    /// into the models folder when on the same disk (no space used twice,
    /// and the model survives the original's deletion), else copied. A
    /// symbolic link is resolved first: the models folder holds the real
    /// file, never a link whose target could be swapped later (issue 39).
    pub fn add_model_file(&self, input: AddModelFile) -> Result<ModelsView> {
        let given = PathBuf::from(input.path.trim());
        let source = std::fs::canonicalize(&given)
            .map_err(|e| CoreError::InvalidRequest(format!("{}: {e}", given.display())))?;
        if !source.is_file() {
            return Err(CoreError::InvalidRequest(format!(
                "{} is not a file",
                source.display()
            )));
        }
        let info = gguf::read(&source).map_err(|e| CoreError::InvalidRequest(e.to_string()))?;
        let stem = given
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = input.name.unwrap_or(stem);
        check_name(&name)?;
        let file = format!("{name}.gguf");
        let bytes = std::fs::metadata(&source)
            .map_err(|e| CoreError::io(format!("reading {}", source.display()), e))?
            .len();
        let _write = self.inner.models.write_lock();
        let mut installed = manifest::read(self.home())?;
        if installed.iter().any(|m| m.name == name || m.file == file) {
            return Err(CoreError::Conflict(format!(
                "a model named {name} is installed; remove it first or give another name"
            )));
        }
        let folder = self.models_folder();
        std::fs::create_dir_all(&folder)
            .map_err(|e| CoreError::io(format!("creating {}", folder.display()), e))?;
        let target = folder.join(&file);
        let tmp = folder.join(format!("{file}.adding"));
        let _ = std::fs::remove_file(&tmp);
        let linked = std::fs::hard_link(&source, &tmp).is_ok()
            && std::fs::symlink_metadata(&tmp).is_ok_and(|m| m.is_file());
        if !linked {
            let _ = std::fs::remove_file(&tmp);
            self.ensure_space(bytes, &format!("the model {}", source.display()))?;
            std::fs::copy(&source, &tmp)
                .map_err(|e| CoreError::io(format!("copying {}", source.display()), e))?;
        }
        let sha256 = download::sha256_of(&tmp)
            .map_err(|e| CoreError::io(format!("reading {}", tmp.display()), e))?;
        std::fs::rename(&tmp, &target)
            .map_err(|e| CoreError::io(format!("writing {}", target.display()), e))?;
        installed.push(pull::record(
            &name,
            &target,
            bytes,
            sha256,
            ModelSource::File,
            None,
            &info,
            self.now(),
        ));
        manifest::write(self.home(), &installed)?;
        drop(_write);
        self.models()
    }

    fn installed_model(&self, name: &str) -> Result<InstalledModel> {
        check_name(name)?;
        manifest::read(self.home())?
            .into_iter()
            .find(|m| m.name == name)
            .ok_or_else(|| CoreError::not_found("model", name))
    }
}

#[cfg(test)]
mod tests;
