//! The record of the installed models: `<data>/models/models.json`, kept
//! beside the files it describes (not in SQLite) so that the folder is
//! self-describing: what Storage counts, a backup of the database restores
//! and "remove the models folder" removes are the same thing, and no
//! migration is needed. Written whole to a temporary file and renamed, so a
//! crash leaves the old record or the new one, never half of one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::error::{CoreError, Result};

/// The manifest's file name inside the models folder.
pub const FILE: &str = "models.json";
/// The manifest's format version.
pub const VERSION: u32 = 1;

/// Where an installed model came from.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, ToSchema, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ModelSource {
    /// Downloaded from the recommended list.
    Recommended,
    /// Downloaded from a URL the user gave.
    Url,
    /// A GGUF file the user picked on disk (copied, or hard-linked when on
    /// the same disk).
    File,
}

/// How fast a model answered on this machine, measured once.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
pub struct ModelSpeed {
    /// Tokens generated per second.
    pub tokens_per_second: f64,
    /// Seconds to the first token.
    pub first_token_seconds: f64,
    /// When it was measured (RFC 3339).
    pub measured_at: String,
}

/// One installed model.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
pub struct InstalledModel {
    /// Its name (`maskflow models use NAME`).
    pub name: String,
    /// Its file's name in the models folder.
    pub file: String,
    /// The file's size.
    #[ts(type = "number")]
    pub bytes: u64,
    /// Its SHA-256 (lower-case hex).
    pub sha256: String,
    /// The file's modification time when added (milliseconds since the
    /// epoch): a file whose size or time differ is hashed again before it
    /// loads, and refused if its SHA-256 changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub modified_ms: Option<i64>,
    /// Where it came from.
    pub source: ModelSource,
    /// The URL it was downloaded from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub url: Option<String>,
    /// When it was added (RFC 3339).
    pub added_at: String,
    /// `general.architecture` of its header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub architecture: Option<String>,
    /// The context it was trained for, in tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub context_length: Option<u64>,
    /// Memory it needs loaded (file, KV cache, buffers), estimated.
    #[ts(type = "number")]
    pub memory_bytes: u64,
    /// How fast it ran here, once measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub speed: Option<ModelSpeed>,
}

#[derive(Serialize, Deserialize, Debug, Default)]
struct Manifest {
    version: u32,
    models: Vec<InstalledModel>,
    /// URL → the SHA-256 its first download had, for recommended models
    /// whose checksum is not published here: later downloads must match
    /// (kept when the model is removed).
    #[serde(default)]
    seen: BTreeMap<String, String>,
}

/// `path`'s modification time in milliseconds since the epoch.
pub fn modified_ms(path: &Path) -> Option<i64> {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .and_then(|d| i64::try_from(d.as_millis()).ok())
}

/// The models folder of a data folder.
pub fn folder(home: &Path) -> PathBuf {
    home.join("models")
}

/// The installed models (none when there is no manifest yet).
pub fn read(home: &Path) -> Result<Vec<InstalledModel>> {
    Ok(load(home)?.models)
}

/// The checksums recorded at first downloads, by URL.
pub fn seen_checksums(home: &Path) -> Result<BTreeMap<String, String>> {
    Ok(load(home)?.seen)
}

/// Replaces the installed models with `models`.
pub fn write(home: &Path, models: &[InstalledModel]) -> Result<()> {
    let mut manifest = load(home)?;
    manifest.models = models.to_vec();
    store(home, &manifest)
}

/// Records the checksum a URL's first download had (an earlier one stays).
pub fn remember_checksum(home: &Path, url: &str, sha256: &str) -> Result<()> {
    let mut manifest = load(home)?;
    if manifest.seen.contains_key(url) {
        return Ok(());
    }
    manifest.seen.insert(url.to_owned(), sha256.to_owned());
    store(home, &manifest)
}

fn load(home: &Path) -> Result<Manifest> {
    let path = folder(home).join(FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Manifest::default()),
        Err(e) => return Err(CoreError::io(format!("reading {}", path.display()), e)),
    };
    let manifest: Manifest = serde_json::from_str(&text)
        .map_err(|e| CoreError::Corrupt(format!("{}: {e}", path.display())))?;
    if manifest.version > VERSION {
        return Err(CoreError::Conflict(format!(
            "{} was written by a newer Maskflow (format {}); update Maskflow",
            path.display(),
            manifest.version
        )));
    }
    Ok(manifest)
}

fn store(home: &Path, manifest: &Manifest) -> Result<()> {
    let dir = folder(home);
    std::fs::create_dir_all(&dir)
        .map_err(|e| CoreError::io(format!("creating {}", dir.display()), e))?;
    let manifest = Manifest {
        version: VERSION,
        models: manifest.models.clone(),
        seen: manifest.seen.clone(),
    };
    let text =
        serde_json::to_string_pretty(&manifest).map_err(|e| CoreError::Corrupt(e.to_string()))?;
    let tmp = dir.join(format!("{FILE}.tmp"));
    std::fs::write(&tmp, text)
        .map_err(|e| CoreError::io(format!("writing {}", tmp.display()), e))?;
    let path = dir.join(FILE);
    std::fs::rename(&tmp, &path)
        .map_err(|e| CoreError::io(format!("writing {}", path.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_round_trips_and_a_newer_one_is_refused() {
        let home = tempfile::tempdir().expect("dir");
        assert!(read(home.path()).expect("empty").is_empty());
        let model = InstalledModel {
            name: "m".into(),
            file: "m.gguf".into(),
            bytes: 3,
            sha256: "ab".into(),
            modified_ms: Some(1),
            source: ModelSource::File,
            url: None,
            added_at: "t".into(),
            architecture: Some("llama".into()),
            context_length: Some(8192),
            memory_bytes: 9,
            speed: None,
        };
        write(home.path(), std::slice::from_ref(&model)).expect("write");
        remember_checksum(home.path(), "u", "first").expect("seen");
        remember_checksum(home.path(), "u", "second").expect("seen");
        write(home.path(), &[]).expect("write");
        write(home.path(), std::slice::from_ref(&model)).expect("write");
        assert_eq!(read(home.path()).expect("read"), vec![model]);
        // The first checksum stays, also across removing the model.
        assert_eq!(seen_checksums(home.path()).expect("seen")["u"], "first");
        std::fs::write(
            folder(home.path()).join(FILE),
            r#"{"version": 99, "models": []}"#,
        )
        .expect("write");
        let e = read(home.path()).expect_err("newer");
        assert!(e.to_string().contains("newer Maskflow"), "{e}");
        std::fs::write(folder(home.path()).join(FILE), "{").expect("write");
        assert!(read(home.path()).is_err());
    }
}
