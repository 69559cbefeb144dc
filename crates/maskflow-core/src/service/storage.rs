//! The data folder's disk use (issue 19): what Maskflow keeps, by kind, with
//! a safe way to clear each; uploads that never joined a workflow expire;
//! and a free-space check before Maskflow writes something large, so a full
//! disk is a sentence, not a half-written file.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{Inner, Service};
use crate::error::{CoreError, Result};
use crate::store::{self, input_files};
use crate::versions::Status;
use maskflow_clock::format_rfc3339;
use maskflow_runner::folder_size;

mod checkpoints;
pub(crate) use checkpoints::stored_policy as stored_checkpoint_policy;

/// The settings key of the upload expiry (a JSON number of hours).
const EXPIRY_KEY: &str = "upload_expiry_hours";
/// Uploads not attached to a workflow are removed after this long by default.
pub const DEFAULT_EXPIRY_HOURS: u32 = 24;
/// The longest expiry the setting accepts (a year).
const MAX_EXPIRY_HOURS: u32 = 24 * 365;
/// The settings key of the largest HTTP upload (a JSON number of MiB).
const UPLOAD_LIMIT_KEY: &str = "upload_limit_mib";
/// The largest upload by default: 1 GiB. A browser copies the file into the
/// data folder, so the cap guards the disk against a mistaken drop; a file
/// named on the command line is read in place and has none.
pub const DEFAULT_UPLOAD_LIMIT_MIB: u64 = 1024;
/// The largest upload the setting accepts: 16 TiB (free space is checked
/// for every upload anyway).
const MAX_UPLOAD_LIMIT_MIB: u64 = 16 << 20;
/// "Clear" leaves uploads younger than this: one may be on its way into a
/// workflow in another window.
const CLEAR_GRACE_MS: u64 = 10 * 60 * 1000;
/// What a script run needs free before it starts (its outputs' size is not
/// known in advance; a disk that fills during the run is reported as such).
pub(crate) const RUN_FLOOR_BYTES: u64 = 32 << 20;
/// How often a long-lived process sweeps expired uploads.
const SWEEP_EVERY: Duration = Duration::from_secs(3600);

/// A kind of thing Maskflow keeps in its data folder.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, ToSchema, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum StorageKind {
    /// Files given to Maskflow (`files/`).
    Uploads,
    /// The working folders and outputs of workflow runs (`runs/`).
    RunOutputs,
    /// Build sessions and their test runs (`sessions/`, `test-runs/`).
    Sessions,
    /// Python environments (`python/`).
    Environments,
    /// uv's download cache (`cache/uv/`): packages an environment was made
    /// from, downloaded again when cleared.
    PackageCache,
    /// Database backups (`backups/`).
    Backups,
    /// Models of the embedded back end (`models/`).
    Models,
    /// The database itself (never cleared here).
    Database,
}

impl StorageKind {
    /// Every kind, in the order the settings screen lists them.
    pub const ALL: [StorageKind; 8] = [
        StorageKind::Uploads,
        StorageKind::RunOutputs,
        StorageKind::Sessions,
        StorageKind::Environments,
        StorageKind::PackageCache,
        StorageKind::Backups,
        StorageKind::Models,
        StorageKind::Database,
    ];

    fn folders(self) -> &'static [&'static str] {
        match self {
            StorageKind::Uploads => &["files"],
            StorageKind::RunOutputs => &["runs"],
            StorageKind::Sessions => &["sessions", "test-runs"],
            StorageKind::Environments => &["python"],
            StorageKind::PackageCache => &["cache/uv"],
            StorageKind::Backups => &["backups"],
            StorageKind::Models => &["models"],
            StorageKind::Database => &[],
        }
    }

    fn label(self) -> &'static str {
        match self {
            StorageKind::Uploads => "Uploaded files",
            StorageKind::RunOutputs => "Run outputs",
            StorageKind::Sessions => "Build sessions",
            StorageKind::Environments => "Python environments",
            StorageKind::PackageCache => "Python package cache",
            StorageKind::Backups => "Database backups",
            StorageKind::Models => "Models",
            StorageKind::Database => "Database",
        }
    }
}

/// One kind's use of the disk.
#[derive(Serialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
pub struct StorageUse {
    /// Which kind.
    pub kind: StorageKind,
    /// Its name for people.
    pub label: String,
    /// Bytes it takes now.
    #[ts(type = "number")]
    pub bytes: u64,
    /// What "Clear" would remove, in bytes (0 when nothing can be).
    #[ts(type = "number")]
    pub clearable_bytes: u64,
    /// What "Clear" removes and what it keeps, in words.
    pub clear_note: String,
}

/// The data folder's use of the disk, for the settings screen.
#[derive(Serialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
pub struct StorageView {
    /// The data folder.
    pub folder: String,
    /// Bytes free on its disk (for this user).
    #[ts(type = "number")]
    pub free_bytes: u64,
    /// Hours after which an upload that joined no workflow is removed (0: never).
    pub upload_expiry_hours: u32,
    /// Full snapshots a flow run in progress keeps, with the smaller
    /// checkpoints after them (0: every checkpoint is kept, also after the
    /// run ends; otherwise a finished run keeps only its final state).
    pub checkpoint_keep_full_snapshots: u32,
    /// The most change-only checkpoints a flow run writes between two full
    /// snapshots (0: every checkpoint is a full snapshot).
    pub checkpoint_full_every: u32,
    /// The largest upload through the browser or HTTP, in MiB.
    #[ts(type = "number")]
    pub upload_limit_mib: u64,
    /// Use by kind.
    pub kinds: Vec<StorageUse>,
}

/// `PUT /api/settings/storage`'s body.
#[derive(Deserialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct StorageInput {
    /// Hours after which an upload that joined no workflow is removed (0: never).
    pub upload_expiry_hours: u32,
    /// Full snapshots a flow run in progress keeps (0: every checkpoint;
    /// 0 to 1000; absent: unchanged).
    #[serde(default)]
    #[ts(optional)]
    pub checkpoint_keep_full_snapshots: Option<u32>,
    /// The most change-only checkpoints between two full snapshots (0 to
    /// 10000; absent: unchanged).
    #[serde(default)]
    #[ts(optional)]
    pub checkpoint_full_every: Option<u32>,
    /// The largest upload through the browser or HTTP, in MiB (1 to
    /// 16,777,216; absent: unchanged).
    #[serde(default)]
    #[ts(optional, type = "number")]
    pub upload_limit_mib: Option<u64>,
}

/// What a clear or an expiry sweep removed.
#[derive(Serialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
pub struct Cleared {
    /// Which kind.
    pub kind: StorageKind,
    /// How many files or folders were removed.
    pub removed: u32,
    /// Bytes freed.
    #[ts(type = "number")]
    pub freed_bytes: u64,
}

impl Service {
    /// The data folder's disk use by kind, and the expiry setting.
    pub fn storage(&self) -> Result<StorageView> {
        let home = self.home();
        let mut kinds = Vec::new();
        for kind in StorageKind::ALL {
            let bytes = match kind {
                StorageKind::Database => ["maskflow.db", "maskflow.db-wal", "maskflow.db-shm"]
                    .iter()
                    .map(|f| std::fs::metadata(home.join(f)).map_or(0, |m| m.len()))
                    .sum(),
                _ => kind
                    .folders()
                    .iter()
                    .map(|f| folder_size(&home.join(f)))
                    .sum(),
            };
            let (clearable, note) = match kind {
                StorageKind::Uploads => (
                    self.clearable_uploads(
                        self.inner.clock.now_ms().saturating_sub(CLEAR_GRACE_MS),
                    )?
                    .iter()
                    .map(|u| u.bytes)
                    .sum(),
                    "Removes files that joined no workflow (and are older than 10 minutes); \
                     a workflow's own files stay."
                        .to_owned(),
                ),
                StorageKind::RunOutputs => (
                    self.finished_run_folders()?
                        .iter()
                        .map(|d| folder_size(d))
                        .sum(),
                    "Removes the output files of finished runs; the runs' records stay.".to_owned(),
                ),
                StorageKind::Sessions => (
                    self.closed_session_folders()?
                        .iter()
                        .map(|d| folder_size(d))
                        .sum(),
                    "Removes the working folders of failed, rejected and archived versions."
                        .to_owned(),
                ),
                StorageKind::Environments => (
                    0,
                    "Python environments are listed, and unused ones removed, in their own card."
                        .to_owned(),
                ),
                StorageKind::PackageCache => (
                    folder_size(&maskflow_pyenv::cache_dir(home)),
                    "Removes uv's download cache; environments stay, and packages are \
                     downloaded again when a new environment needs them."
                        .to_owned(),
                ),
                StorageKind::Backups => (0, "Backups are managed in their own list.".to_owned()),
                StorageKind::Models => (
                    0,
                    "Models are listed, used and removed in their own card.".to_owned(),
                ),
                StorageKind::Database => (
                    0,
                    "Workflows, versions, runs and the privacy ledger.".to_owned(),
                ),
            };
            kinds.push(StorageUse {
                kind,
                label: kind.label().to_owned(),
                bytes,
                clearable_bytes: clearable,
                clear_note: note,
            });
        }
        let policy = checkpoints::stored_policy(&self.db());
        Ok(StorageView {
            folder: home.display().to_string(),
            free_bytes: crate::disk::available_space(home),
            upload_expiry_hours: self.upload_expiry_hours(),
            checkpoint_keep_full_snapshots: policy.keep_full_snapshots,
            checkpoint_full_every: policy.full_every,
            upload_limit_mib: self.upload_limit_mib(),
            kinds,
        })
    }

    /// Stores the upload expiry (hours; 0 keeps uploads until cleared), the
    /// largest upload, and the flow runs' checkpoint retention, which the
    /// flow engine applies from its next checkpoint on. Nothing is stored
    /// unless all are valid.
    pub fn set_storage(&self, input: StorageInput) -> Result<StorageView> {
        if input.upload_expiry_hours > MAX_EXPIRY_HOURS {
            return Err(CoreError::InvalidRequest(format!(
                "upload_expiry_hours must be between 0 (never) and {MAX_EXPIRY_HOURS}, not {}",
                input.upload_expiry_hours
            )));
        }
        if let Some(mib) = input.upload_limit_mib
            && !(1..=MAX_UPLOAD_LIMIT_MIB).contains(&mib)
        {
            return Err(CoreError::InvalidRequest(format!(
                "upload_limit_mib must be between 1 and {MAX_UPLOAD_LIMIT_MIB} (16 TiB), not {mib}"
            )));
        }
        let now = self.now();
        let policy = {
            let db = self.db();
            let policy = checkpoints::checked_policy(
                checkpoints::stored_policy(&db),
                input.checkpoint_keep_full_snapshots,
                input.checkpoint_full_every,
            )?;
            store::settings::put(
                &db,
                EXPIRY_KEY,
                &input.upload_expiry_hours.to_string(),
                &now,
            )?;
            checkpoints::store_policy(&db, policy, &now)?;
            if let Some(mib) = input.upload_limit_mib {
                store::settings::put(&db, UPLOAD_LIMIT_KEY, &mib.to_string(), &now)?;
            }
            policy
        };
        self.inner.flows.set_checkpoint_policy(policy);
        self.storage()
    }

    /// Removes what "Clear" promises for `kind` (see [`StorageUse::clear_note`]).
    pub fn clear_storage(&self, kind: StorageKind) -> Result<Cleared> {
        let mut cleared = Cleared {
            kind,
            removed: 0,
            freed_bytes: 0,
        };
        match kind {
            StorageKind::Uploads => {
                let cutoff = self.inner.clock.now_ms().saturating_sub(CLEAR_GRACE_MS);
                return self.remove_uploads(cutoff);
            }
            StorageKind::RunOutputs => {
                for dir in self.finished_run_folders()? {
                    remove_counted(&dir, &mut cleared)?;
                }
            }
            StorageKind::Sessions => {
                for dir in self.closed_session_folders()? {
                    remove_counted(&dir, &mut cleared)?;
                }
            }
            StorageKind::PackageCache => {
                let dir = maskflow_pyenv::cache_dir(self.home());
                if dir.exists() {
                    remove_counted(&dir, &mut cleared)?;
                }
            }
            StorageKind::Environments
            | StorageKind::Backups
            | StorageKind::Models
            | StorageKind::Database => {
                return Err(CoreError::InvalidRequest(format!(
                    "{} cannot be cleared here",
                    kind.label()
                )));
            }
        }
        Ok(cleared)
    }

    /// Removes uploads that joined no workflow and are older than the
    /// expiry setting; run at start-up and hourly by long-lived processes.
    pub fn expire_uploads(&self) -> Result<Cleared> {
        let hours = self.upload_expiry_hours();
        if hours == 0 {
            return Ok(Cleared {
                kind: StorageKind::Uploads,
                removed: 0,
                freed_bytes: 0,
            });
        }
        let age_ms = u64::from(hours) * 3_600_000;
        self.remove_uploads(self.inner.clock.now_ms().saturating_sub(age_ms))
    }

    /// Refuses with [`CoreError::DiskFull`] unless `needed` bytes (plus a
    /// small reserve) are free on the disk of the data folder; `what` says
    /// what needed them ("the upload report.csv").
    pub fn ensure_space(&self, needed: u64, what: &str) -> Result<()> {
        crate::disk::ensure_space_in(self.home(), needed, what)
    }

    /// The largest upload through the browser or HTTP, in MiB.
    pub fn upload_limit_mib(&self) -> u64 {
        store::settings::get(&self.db(), UPLOAD_LIMIT_KEY)
            .ok()
            .flatten()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(DEFAULT_UPLOAD_LIMIT_MIB)
    }

    fn upload_expiry_hours(&self) -> u32 {
        store::settings::get(&self.db(), EXPIRY_KEY)
            .ok()
            .flatten()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(DEFAULT_EXPIRY_HOURS)
    }

    /// Uploads no version uses, created before `cutoff_ms`, and folders under
    /// `files/` that no row names (left by a process that died mid-upload).
    fn clearable_uploads(&self, cutoff_ms: u64) -> Result<Vec<Upload>> {
        let cutoff = format_rfc3339(cutoff_ms);
        let files_dir = self.home().join("files");
        let (rows, known) = {
            let db = self.db();
            let rows = input_files::unlinked(&db)?;
            let known: std::collections::HashSet<String> =
                input_files::ids(&db)?.into_iter().collect();
            (rows, known)
        };
        let mut out = Vec::new();
        for input_files::UnlinkedFile {
            id,
            path,
            created_at,
        } in rows
        {
            if created_at.as_str() >= cutoff.as_str() {
                continue;
            }
            // A dropped file in the desktop app is read where it lies: only
            // Maskflow's own copy is ever removed, never the user's file.
            let dir = files_dir.join(&id);
            let own = Path::new(&path).starts_with(&dir);
            let bytes = if own { folder_size(&dir) } else { 0 };
            out.push(Upload {
                id: Some(id),
                dir: own.then_some(dir),
                bytes,
            });
        }
        if let Ok(entries) = std::fs::read_dir(&files_dir) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let old = entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .is_some_and(|t| (t.as_millis() as u64) < cutoff_ms);
                // Every upload is a folder; anything else here is not ours.
                let folder = entry.file_type().is_ok_and(|t| t.is_dir());
                if folder && !known.contains(&name) && old {
                    out.push(Upload {
                        id: None,
                        bytes: folder_size(&entry.path()),
                        dir: Some(entry.path()),
                    });
                }
            }
        }
        Ok(out)
    }

    fn remove_uploads(&self, cutoff_ms: u64) -> Result<Cleared> {
        let mut cleared = Cleared {
            kind: StorageKind::Uploads,
            removed: 0,
            freed_bytes: 0,
        };
        for upload in self.clearable_uploads(cutoff_ms)? {
            if let Some(id) = &upload.id {
                // The row goes first: a file whose row is gone is an orphan
                // the next sweep removes; a row whose file is gone would be
                // a broken upload.
                if !input_files::delete_unlinked(&self.db(), id)? {
                    continue; // joined a workflow meanwhile
                }
            }
            if let Some(dir) = &upload.dir {
                std::fs::remove_dir_all(dir)
                    .map_err(|e| CoreError::io(format!("removing {}", dir.display()), e))?;
            }
            cleared.removed += 1;
            cleared.freed_bytes += upload.bytes;
        }
        Ok(cleared)
    }

    fn finished_run_folders(&self) -> Result<Vec<PathBuf>> {
        let runs = self.home().join("runs");
        let dirs = store::builds::finished_run_workdirs(&self.db())?;
        Ok(dirs
            .into_iter()
            .map(PathBuf::from)
            .filter(|d| d.starts_with(&runs) && d.exists())
            .collect())
    }

    fn closed_session_folders(&self) -> Result<Vec<PathBuf>> {
        let home = self.home();
        let ids = {
            let db = self.db();
            let mut ids = Vec::new();
            for status in [Status::Failed, Status::Rejected, Status::Archived] {
                ids.extend(store::versions_in(&db, status)?.into_iter().map(|v| v.id));
            }
            ids
        };
        Ok(ids
            .iter()
            .flat_map(|id| {
                [
                    crate::builder::session_dir(home, id),
                    crate::builder::test_dir(home, id),
                ]
            })
            .filter(|d| d.exists())
            .collect())
    }

    /// Sweeps expired uploads now and then every hour on a thread of its
    /// own, for as long as the service lives.
    pub(super) fn start_housekeeping(&self) {
        if let Err(e) = self.expire_uploads() {
            eprintln!("maskflow: removing expired uploads: {e}");
        }
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        let _ = std::thread::Builder::new()
            .name("maskflow-housekeeping".into())
            .spawn(move || {
                let step = Duration::from_secs(60);
                let mut waited = Duration::ZERO;
                loop {
                    std::thread::sleep(step);
                    waited += step;
                    let Some(inner) = weak.upgrade() else { return };
                    if waited >= SWEEP_EVERY {
                        waited = Duration::ZERO;
                        if let Err(e) = (Service { inner }).expire_uploads() {
                            eprintln!("maskflow: removing expired uploads: {e}");
                        }
                    }
                }
            });
    }
}

/// An upload "Clear" or the expiry may remove.
struct Upload {
    /// Its row, if it has one.
    id: Option<String>,
    /// Maskflow's own copy, if it made one.
    dir: Option<PathBuf>,
    bytes: u64,
}

fn remove_counted(dir: &Path, cleared: &mut Cleared) -> Result<()> {
    let bytes = folder_size(dir);
    std::fs::remove_dir_all(dir)
        .map_err(|e| CoreError::io(format!("removing {}", dir.display()), e))?;
    cleared.removed += 1;
    cleared.freed_bytes += bytes;
    Ok(())
}
