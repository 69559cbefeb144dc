//! Firing schedules: a cron schedule whose time came runs its workflow or
//! starts its flow; a watched folder's new or changed files each run the
//! workflow once. A file is known by (path, size, mtime, SHA-256): the same
//! size and mtime skip it unread, the same content under a new mtime (a
//! rewrite) skips it too. Results land next to the file, or in the chosen
//! folder, as `<file stem>.<output name>`. A failure backs the schedule off
//! (doubling, capped) and is kept as its last error; every run started here
//! records its trigger for the run history.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::Service;
use super::schedules::{backoff_ms, next_after, parse_cron};
use super::watched_files::{self, Entry};
use crate::conversation::spec::FieldType;
use crate::error::{CoreError, Result};
use crate::store::schedules::{self as rows, Outcome, ScheduleRow, SeenFile, TriggerRow};
use maskflow_flows::StartFlow;

/// A watched file a firing runs on: where it is (for the trigger and the
/// outputs' place), the private copy the run reads, its permissions.
struct Input<'a> {
    file: &'a Path,
    staged: &'a Path,
    mode: u32,
}

/// What one firing did.
struct Fired {
    run_id: Option<String>,
    status: String,
    error: Option<String>,
}

/// The status of a firing whose file differs from the approved one in
/// what the script reads: nothing ran, nothing was written.
const REFUSED: &str = "refused";

/// What a refused firing says: the file, each difference, and the way on.
/// The outputs placed before stay as they were; the schedule shows them
/// as stale until a run succeeds.
fn refusal(file: Option<&Path>, differences: &[String]) -> String {
    let what = file.map_or_else(|| "the input".to_owned(), |f| f.display().to_string());
    format!(
        "{what}: not run: it differs from the file the workflow was approved with: {}. \
         Nothing was written; the outputs of the last good run are kept as they were. \
         If the script can read the file as it is, run it once by hand with `maskflow run` \
         and --force; otherwise edit the workflow for the new layout. The file runs again \
         when the back-off is over",
        differences
            .iter()
            .map(|d| d.trim().trim_end_matches('.'))
            .collect::<Vec<_>>()
            .join("; ")
    )
}

/// A watched file as recorded: its state and hash, read through the
/// checked descriptor (a link is never followed).
fn seen_file(path: &Path, read: &watched_files::ReadFile) -> SeenFile {
    SeenFile {
        path: path.display().to_string(),
        size: read.size,
        mtime_ms: read.mtime_ms,
        sha256: read.sha256.clone(),
    }
}

/// The record of a skipped entry (a link, a special file): reported once,
/// again only when it changes.
const SKIPPED: &str = "skipped";

/// What a scan found: files to run, and entries skipped with the reason.
#[derive(Default)]
struct Found {
    fresh: Vec<PathBuf>,
    skipped: Vec<(PathBuf, String)>,
}

/// Whether a file in a watched folder is one to run: not hidden, not a
/// partial download or an editor's backup, of an accepted type.
fn wanted(path: &Path, accept: &[String]) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let lower = name.to_ascii_lowercase();
    if name.starts_with('.')
        || name.ends_with('~')
        || [".part", ".tmp", ".crdownload", ".swp"]
            .iter()
            .any(|s| lower.ends_with(s))
    {
        return false;
    }
    accept.is_empty()
        || accept.iter().any(|a| {
            let a = a.trim().to_ascii_lowercase();
            let a = a.strip_prefix('*').unwrap_or(&a);
            let dotted = if a.starts_with('.') {
                a.to_owned()
            } else {
                format!(".{a}")
            };
            lower.ends_with(&dotted)
        })
}

impl Service {
    /// Runs every schedule due at the clock's time: cron schedules whose
    /// time came (once each, however many times were missed), and watched
    /// folders whose back-off after a failure is over. The scheduler calls
    /// it on every tick; a test calls it after moving the clock. Answers the
    /// runs started.
    pub async fn run_due_schedules(&self) -> Result<Vec<String>> {
        let now = self.now_ms_i64();
        let mut started = Vec::new();
        // Read first: a guard in the loop's head would be held through it.
        let all = rows::list(&self.db())?;
        for row in all {
            if row.paused {
                continue;
            }
            if let Some(expr) = &row.cron {
                let Some(due) = row.next_run_ms else { continue };
                if now < due {
                    continue;
                }
                let next = match parse_cron(expr).and_then(|c| next_after(&c, now)) {
                    Ok(next) => next,
                    Err(e) => {
                        self.record_failure(&row, None, "error", &e.to_string())?;
                        continue;
                    }
                };
                // Claimed once, here or in another process on this data folder.
                if !rows::claim_firing(&self.db(), &row.id, due, next)? {
                    continue;
                }
                let fired = self.fire(&row, None).await;
                started.extend(fired.run_id.clone());
                self.settle(&row, fired, Some(next))?;
            } else if row.retry_at_ms.is_some_and(|at| now >= at) {
                started.extend(self.scan_watched_folder(&row.id).await?);
            }
        }
        Ok(started)
    }

    /// Runs the workflow of a watched-folder schedule on each new or
    /// changed file of its input's types, once each (the watcher calls it
    /// when files settle). Stops at the first failure and backs off; the
    /// failed file runs again when the back-off is over. Answers the runs.
    pub async fn scan_watched_folder(&self, id_or_name: &str) -> Result<Vec<String>> {
        let row = self.schedule_row(id_or_name)?;
        let Some(folder) = row.folder.clone() else {
            return Err(CoreError::InvalidRequest(format!(
                "schedule {} watches no folder",
                row.name
            )));
        };
        if row.paused || row.retry_at_ms.is_some_and(|at| self.now_ms_i64() < at) {
            return Ok(Vec::new());
        }
        // One scan at a time across processes on this data folder.
        let Ok(_lease) = self.lease(format!("schedule {}", row.id)) else {
            return Ok(Vec::new());
        };
        // Listing and hashing read the folder's files: off this thread.
        let found = {
            let (this, row, folder) = (self.clone(), row.clone(), PathBuf::from(&folder));
            tokio::task::spawn_blocking(move || this.new_files(&row, &folder))
                .await
                .map_err(|e| CoreError::Corrupt(format!("scanning the watched folder: {e}")))??
        };
        let mut skipped = found.skipped;
        let mut started = Vec::new();
        for path in found.fresh {
            // The input is read once, through a descriptor opened without
            // following a link, into a private copy the run reads.
            let staging = self.home().join("schedules/staging").join(self.id("in"));
            let staged = path
                .file_name()
                .map(|n| staging.join(n))
                .unwrap_or_else(|| staging.join("input"));
            let read = {
                let (from, to) = (path.clone(), staged.clone());
                tokio::task::spawn_blocking(move || {
                    std::fs::create_dir_all(to.parent().unwrap_or(&to))?;
                    watched_files::read(&from, Some(&to))
                })
                .await
                .map_err(|e| CoreError::Corrupt(format!("reading a watched file: {e}")))?
            };
            let read = match read {
                Ok(read) => read,
                Err(e) => {
                    let _ = std::fs::remove_dir_all(&staging);
                    if std::fs::symlink_metadata(&path).is_ok() {
                        self.mark_skipped(&row, &path)?;
                        skipped.push((path, format!("not read: {e}")));
                    }
                    continue;
                }
            };
            let fired = self
                .fire(
                    &row,
                    Some(Input {
                        file: &path,
                        staged: &staged,
                        mode: read.mode,
                    }),
                )
                .await;
            let _ = std::fs::remove_dir_all(&staging);
            started.extend(fired.run_id.clone());
            let ok = fired.error.is_none();
            if ok {
                let file = seen_file(&path, &read);
                rows::put_seen(&self.db(), &row.id, &file, fired.run_id.as_deref())?;
            }
            self.settle(&row, fired, None)?;
            if !ok {
                break;
            }
        }
        self.report_skipped(&row, &skipped)?;
        Ok(started)
    }

    /// Records a skipped entry as seen (with [`SKIPPED`] for its hash), so
    /// it is reported once, again only when it changes.
    fn mark_skipped(&self, row: &ScheduleRow, path: &Path) -> Result<()> {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return Ok(());
        };
        let mtime_ms = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .and_then(|d| i64::try_from(d.as_millis()).ok())
            .unwrap_or(0);
        let seen = SeenFile {
            path: path.display().to_string(),
            size: i64::try_from(meta.len()).unwrap_or(i64::MAX),
            mtime_ms,
            sha256: SKIPPED.into(),
        };
        rows::put_seen(&self.db(), &row.id, &seen, None)?;
        Ok(())
    }

    /// Says which entries a scan skipped, and why, in the schedule's last
    /// error, without backing it off.
    fn report_skipped(&self, row: &ScheduleRow, skipped: &[(PathBuf, String)]) -> Result<()> {
        if skipped.is_empty() {
            return Ok(());
        }
        let lines: Vec<String> = skipped
            .iter()
            .map(|(path, why)| format!("{} skipped: {why}", path.display()))
            .collect();
        let row = self.schedule_row(&row.id).unwrap_or_else(|_| row.clone());
        let message = lines.join("; ");
        eprintln!("maskflow: schedule {}: {message}", row.name);
        let outcome = Outcome {
            run_id: row.last_run_id.as_deref(),
            status: SKIPPED,
            error: Some(&message),
            failures: row.failures,
            retry_at_ms: row.retry_at_ms,
            at: &self.now(),
        };
        rows::record_outcome(&self.db(), &row.id, &outcome)?;
        Ok(())
    }

    /// The files of `folder` not run yet, oldest name first, and the
    /// entries skipped (links, special files, files past the size cap),
    /// each looked at without following it. A file whose content is
    /// unchanged since it was seen (only touched, or rewritten with the
    /// same bytes) is recorded again and skipped. Blocking.
    fn new_files(&self, row: &ScheduleRow, folder: &Path) -> Result<Found> {
        let accept = self.accepted_types(row)?;
        let entries = std::fs::read_dir(folder).map_err(|e| {
            CoreError::io(
                format!("reading the watched folder {}", folder.display()),
                e,
            )
        })?;
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| wanted(p, &accept))
            .collect();
        paths.sort();
        let mut found = Found::default();
        for path in paths {
            let key = path.display().to_string();
            let known = rows::seen(&self.db(), &row.id, &key)?;
            let (size, mtime_ms) = match watched_files::look(&path) {
                None => continue,
                Some(Entry::File { size, mtime_ms }) => (size, mtime_ms),
                Some(Entry::Skipped(why)) => {
                    let meta = std::fs::symlink_metadata(&path).ok();
                    let unchanged = known.as_ref().zip(meta).is_some_and(|(k, m)| {
                        k.sha256 == SKIPPED && u64::try_from(k.size).ok() == Some(m.len())
                    });
                    if !unchanged {
                        self.mark_skipped(row, &path)?;
                        found.skipped.push((path, why));
                    }
                    continue;
                }
            };
            match known {
                Some(k) if k.size == size && k.mtime_ms == mtime_ms && k.sha256 != SKIPPED => {}
                Some(k) if k.size == size => match watched_files::read(&path, None) {
                    Ok(read) if read.sha256 == k.sha256 => {
                        rows::put_seen(&self.db(), &row.id, &seen_file(&path, &read), None)?;
                    }
                    Ok(_) => found.fresh.push(path),
                    Err(e) => {
                        self.mark_skipped(row, &path)?;
                        found.skipped.push((path, format!("not read: {e}")));
                    }
                },
                _ => found.fresh.push(path),
            }
        }
        Ok(found)
    }

    /// The file types the scheduled workflow's file input accepts (none: any).
    fn accepted_types(&self, row: &ScheduleRow) -> Result<Vec<String>> {
        let Some(wf) = &row.workflow_id else {
            return Ok(Vec::new());
        };
        let fields = self.active_version(wf)?.fields;
        Ok(fields
            .into_iter()
            .find(|f| matches!(f.field_type, FieldType::File | FieldType::Files))
            .and_then(|f| f.accept)
            .unwrap_or_default())
    }

    /// The files present when a watched folder is scheduled count as seen.
    pub(super) fn mark_present_files_seen(&self, row: &ScheduleRow) -> Result<()> {
        let Some(folder) = &row.folder else {
            return Ok(());
        };
        for path in self.new_files(row, Path::new(folder))?.fresh {
            if let Ok(read) = watched_files::read(&path, None) {
                rows::put_seen(&self.db(), &row.id, &seen_file(&path, &read), None)?;
            }
        }
        Ok(())
    }

    /// Runs the schedule's target once (on `file` for a watched folder) and
    /// records the trigger; never fails: a failure is the answer's error.
    async fn fire(&self, row: &ScheduleRow, input: Option<Input<'_>>) -> Fired {
        let file = input.as_ref().map(|i| i.file);
        let kind = if file.is_some() { "folder" } else { "cron" };
        let result = match (&row.workflow_id, &row.flow_name) {
            (Some(wf), _) => self.fire_workflow(row, wf, input.as_ref()).await,
            (None, Some(flow)) => {
                let request = StartFlow {
                    working_folder: row.output_folder.clone(),
                    ..StartFlow::default()
                };
                self.flow_start(flow, request)
                    .map(|s| (s.conversation_id, "started".to_owned(), None))
            }
            (None, None) => Err(CoreError::Corrupt(format!(
                "schedule {} has no target",
                row.id
            ))),
        };
        match result {
            Ok((run_id, status, error)) => {
                let trigger = TriggerRow {
                    run_id: run_id.clone(),
                    schedule_id: Some(row.id.clone()),
                    kind: kind.into(),
                    file: file.map(|f| f.display().to_string()),
                };
                let recorded = rows::put_trigger(&self.db(), &trigger, &self.now());
                if let Err(e) = recorded {
                    eprintln!("maskflow: recording the trigger of {run_id}: {e}");
                }
                Fired {
                    run_id: Some(run_id),
                    status,
                    error,
                }
            }
            Err(CoreError::InputsDiffer(differences)) => Fired {
                run_id: None,
                status: REFUSED.into(),
                error: Some(refusal(file, &differences)),
            },
            Err(e) => Fired {
                run_id: None,
                status: "error".into(),
                error: Some(match file {
                    Some(f) => format!("{}: {e}", f.display()),
                    None => e.to_string(),
                }),
            },
        }
    }

    /// Runs the workflow and places its outputs; (run id, status, error).
    async fn fire_workflow(
        &self,
        row: &ScheduleRow,
        workflow_id: &str,
        input: Option<&Input<'_>>,
    ) -> Result<(String, String, Option<String>)> {
        let file = input.map(|i| i.file);
        let mut inputs = BTreeMap::new();
        if let Some(input) = input {
            let fields = self.active_version(workflow_id)?.fields;
            let field = fields
                .iter()
                .find(|f| matches!(f.field_type, FieldType::File | FieldType::Files))
                .ok_or_else(|| {
                    CoreError::InvalidRequest(format!("workflow {workflow_id} takes no file"))
                })?;
            inputs.insert(field.name.clone(), vec![input.staged.display().to_string()]);
        }
        // The file is checked against the approved one before any script
        // runs, as `maskflow run` does: a difference in what the script
        // reads refuses it; what it does not read is kept as a note.
        let check = {
            let (this, wf, inputs) = (self.clone(), workflow_id.to_owned(), inputs.clone());
            tokio::task::spawn_blocking(move || this.local_input_check(&wf, &inputs))
                .await
                .map_err(|e| CoreError::Corrupt(format!("checking the watched file: {e}")))??
        };
        if !check.refusals.is_empty() {
            return Err(CoreError::InputsDiffer(check.refusals));
        }
        let run = self
            .run_workflow_local_noted(workflow_id, inputs, check.notes)
            .await?;
        if run.status != "succeeded" {
            let why = match file {
                Some(f) => format!(
                    "{}: run {} {}: {}",
                    f.display(),
                    run.id,
                    run.status,
                    run.message
                ),
                None => format!("run {} {}: {}", run.id, run.status, run.message),
            };
            return Ok((run.id, run.status, Some(why)));
        }
        let place = self.place_outputs(row, &run, input);
        Ok(match place {
            Ok(()) => (run.id, run.status, None),
            Err(e) => (run.id, "error".into(), Some(e.to_string())),
        })
    }

    /// Copies a run's outputs next to the input file (or into the output
    /// folder) as `<stem>.<output>`; a cron run's go into the output folder
    /// by name. Each is a new file renamed into place, with the input's
    /// permissions at most, so nothing is written through a link left at
    /// its name. Outputs written into the watched folder are recorded as
    /// seen, so they never run the workflow themselves.
    fn place_outputs(
        &self,
        row: &ScheduleRow,
        run: &super::RunView,
        input: Option<&Input<'_>>,
    ) -> Result<()> {
        let file = input.map(|i| i.file);
        let mode = input.map_or(0o644, |i| i.mode);
        let dir = match (&row.output_folder, file.and_then(Path::parent)) {
            (Some(out), _) => PathBuf::from(out),
            (None, Some(parent)) => parent.to_owned(),
            (None, None) => return Ok(()),
        };
        let stem = file
            .and_then(Path::file_stem)
            .map(|s| s.to_string_lossy().into_owned());
        for o in &run.outputs {
            let src = self.run_output(&run.id, &o.name)?;
            let flat = o.name.replace('/', "_");
            let dst = dir.join(match &stem {
                Some(stem) => format!("{stem}.{flat}"),
                None => flat,
            });
            watched_files::place(&src, &dst, mode, &run.id)
                .map_err(|e| CoreError::io(format!("writing an output to {}", dst.display()), e))?;
            if row.folder.as_deref().is_some_and(|f| Path::new(f) == dir)
                && let Ok(read) = watched_files::read(&dst, None)
            {
                rows::put_seen(&self.db(), &row.id, &seen_file(&dst, &read), Some(&run.id))?;
            }
        }
        Ok(())
    }

    /// Records a firing's outcome: a success clears the back-off, a failure
    /// doubles it (capped) and, for cron, retries when it is over.
    fn settle(&self, row: &ScheduleRow, fired: Fired, cron_next: Option<i64>) -> Result<()> {
        self.record_settled(row, &fired, cron_next)?;
        self.publish_schedule_ran(&row.id, fired);
        Ok(())
    }

    /// Tells a firing's outcome to whoever listens (the app's notifications).
    fn publish_schedule_ran(&self, id: &str, fired: Fired) {
        let Ok(view) = self.get_schedule(id) else {
            return;
        };
        self.inner
            .events
            .publish(crate::events::Event::ScheduleRan {
                schedule_id: view.id,
                name: view.name,
                run_id: fired.run_id,
                status: fired.status,
                error: fired.error,
                stale: view.stale,
            });
    }

    fn record_settled(
        &self,
        row: &ScheduleRow,
        fired: &Fired,
        cron_next: Option<i64>,
    ) -> Result<()> {
        match &fired.error {
            None => {
                let outcome = Outcome {
                    run_id: fired.run_id.as_deref(),
                    status: &fired.status,
                    error: None,
                    failures: 0,
                    retry_at_ms: None,
                    at: &self.now(),
                };
                rows::record_outcome(&self.db(), &row.id, &outcome)?;
                if let Some(next) = cron_next {
                    rows::set_next_run(&self.db(), &row.id, Some(next))?;
                }
                Ok(())
            }
            Some(error) => self.record_failure(row, fired.run_id.as_deref(), &fired.status, error),
        }
    }

    fn record_failure(
        &self,
        row: &ScheduleRow,
        run_id: Option<&str>,
        status: &str,
        error: &str,
    ) -> Result<()> {
        // The row may have moved on since it was read (a claim, an earlier failure).
        let failures = self
            .schedule_row(&row.id)
            .map(|r| r.failures)
            .unwrap_or(row.failures)
            + 1;
        let retry_at = self.now_ms_i64().saturating_add(backoff_ms(failures));
        let outcome = Outcome {
            run_id,
            status,
            error: Some(error),
            failures,
            retry_at_ms: Some(retry_at),
            at: &self.now(),
        };
        rows::record_outcome(&self.db(), &row.id, &outcome)?;
        if row.cron.is_some() {
            rows::set_next_run(&self.db(), &row.id, Some(retry_at))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_settled_files_of_accepted_types_are_wanted() {
        let csv = vec![".csv".to_owned()];
        assert!(wanted(Path::new("/in/a.csv"), &csv));
        assert!(wanted(Path::new("/in/A.CSV"), &csv));
        assert!(!wanted(Path::new("/in/a.xlsx"), &csv));
        assert!(!wanted(Path::new("/in/.a.csv"), &csv));
        assert!(!wanted(Path::new("/in/a.csv.part"), &[]));
        assert!(!wanted(Path::new("/in/a.csv~"), &[]));
        assert!(wanted(Path::new("/in/a.xlsx"), &[]));
        assert!(wanted(Path::new("/in/a.csv"), &["csv".to_owned()]));
    }
}
