//! Schedules (issue 30): an approved workflow or a flow run by a cron
//! expression (in the user's local time) or by new and changed files in a
//! watched folder. This module holds the wire types, the checks made when
//! a schedule is created, and pause / resume / remove; firing is in
//! `schedules_run`, the background loop and the folder watcher in
//! `schedules_watch`. Times come from the service's clock, so a test moves
//! time by hand.

use std::path::Path;
use std::str::FromStr;

use chrono::{Local, TimeZone};
use croner::Cron;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::Service;
use crate::conversation::spec::FieldType;
use crate::error::{CoreError, Result};
use crate::store::schedules::{self as rows, ScheduleRow};
use maskflow_clock::format_rfc3339;

/// The first wait after a failure; each further failure doubles it.
pub const BACKOFF_BASE_MS: i64 = 60_000;
/// The longest wait after failures.
pub const BACKOFF_CAP_MS: i64 = 3_600_000;
/// Longest schedule name, in characters.
pub const MAX_SCHEDULE_NAME: usize = 64;

/// `POST /api/schedules`'s body: what runs, and when.
#[derive(Deserialize, Clone, Debug, Default, PartialEq, ToSchema, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(optional_fields)]
pub struct ScheduleInput {
    /// The name as the person writes it ("weekly sales report"); its
    /// units and folders get its safe name (`slug` of the view).
    pub name: String,
    /// The workflow (id or exact name) to run, or
    #[serde(default)]
    pub workflow: Option<String>,
    /// the flow to run.
    #[serde(default)]
    pub flow: Option<String>,
    /// A 5-field cron expression (`0 7 * * *`: 7:00 every day, local time), or
    #[serde(default)]
    pub cron: Option<String>,
    /// a folder to watch (an absolute path; workflows only).
    #[serde(default)]
    pub folder: Option<String>,
    /// Where results go (absolute); none: next to the file (a watched
    /// folder), or the run's own folder (cron).
    #[serde(default)]
    pub output_folder: Option<String>,
}

/// A schedule as the Settings page shows it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
pub struct ScheduleView {
    /// `sch_…`
    pub id: String,
    /// Its name, as the person wrote it.
    pub name: String,
    /// Its safe file and unit name, derived from the name
    /// (`weekly-sales-report`): the systemd units
    /// (`maskflow-<slug>.timer`), the launchd label, the scheduled-results
    /// folder.
    pub slug: String,
    /// `workflow` or `flow`.
    pub target_kind: String,
    /// The workflow's id or the flow's name.
    pub target: String,
    /// What the user sees for the target (the workflow's name).
    pub target_label: String,
    /// The cron expression, when it is one.
    pub cron: Option<String>,
    /// The watched folder, when it is one.
    pub folder: Option<String>,
    /// Where results go.
    pub output_folder: Option<String>,
    /// Paused schedules run nothing.
    pub paused: bool,
    /// When it runs next (RFC 3339; cron, or a retry after a failure).
    pub next_run_at: Option<String>,
    /// When it last ran (RFC 3339).
    pub last_run_at: Option<String>,
    /// Its last run.
    pub last_run_id: Option<String>,
    /// Its last run's status.
    pub last_status: Option<String>,
    /// Why it last failed (cleared by a success).
    pub last_error: Option<String>,
    /// Failures in a row.
    #[ts(type = "number")]
    pub failures: i64,
    /// When a run of it last succeeded: the outputs it placed are from then.
    pub last_success_at: Option<String>,
    /// Whether the outputs it placed last are stale: its runs since that
    /// success were refused or failed, so they are not this period's.
    pub stale: bool,
}

/// What started a run: shown in the run history.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, ToSchema, ts_rs::TS)]
pub struct RunTrigger {
    /// `cron`, `folder` or `manual`.
    pub kind: String,
    /// The schedule's name, for a scheduled run.
    pub schedule: Option<String>,
    /// The file a watched folder ran it on.
    pub file: Option<String>,
}

fn bad(message: String) -> CoreError {
    CoreError::InvalidRequest(message)
}

/// Parses a 5-field cron expression (or `@daily`…), naming it when it is wrong.
pub fn parse_cron(expr: &str) -> Result<Cron> {
    let expr = expr.trim();
    if expr.starts_with('@') {
        return Cron::from_str(expr).map_err(|e| bad(format!("cron {expr:?}: {e}")));
    }
    if expr.split_whitespace().count() != 5 {
        return Err(bad(format!(
            "cron {expr:?}: give 5 fields: minute hour day-of-month month day-of-week"
        )));
    }
    Cron::from_str(expr).map_err(|e| bad(format!("cron {expr:?}: {e}")))
}

/// The first time after `after_ms` that `cron` matches, in local time.
pub fn next_after(cron: &Cron, after_ms: i64) -> Result<i64> {
    let start = Local
        .timestamp_millis_opt(after_ms)
        .single()
        .ok_or_else(|| bad(format!("{after_ms} is not a time")))?;
    cron.find_next_occurrence(&start, false)
        .map(|t| t.timestamp_millis())
        .map_err(|e| bad(format!("cron {}: no next time: {e}", cron.as_str())))
}

/// How long to wait after `failures` failures in a row: doubling from
/// [`BACKOFF_BASE_MS`], at most [`BACKOFF_CAP_MS`].
pub fn backoff_ms(failures: i64) -> i64 {
    let doublings = u32::try_from(failures.saturating_sub(1).clamp(0, 20)).unwrap_or(20);
    BACKOFF_BASE_MS
        .saturating_mul(1_i64 << doublings)
        .min(BACKOFF_CAP_MS)
}

/// A schedule's name as the person wrote it — spaces, accents, any
/// script (issue 44) — up to [`MAX_SCHEDULE_NAME`] characters, with no
/// control character. Its units and folders use its safe name
/// ([`crate::file_names::slug`]).
fn checked_name(name: &str) -> Result<String> {
    let name = name.trim();
    let ok = !name.is_empty()
        && name.chars().count() <= MAX_SCHEDULE_NAME
        && !name.chars().any(char::is_control);
    if !ok {
        return Err(bad(format!(
            "schedule name {name:?}: give 1 to {MAX_SCHEDULE_NAME} characters on one line \
             (spaces and accents are fine; no tab or control character)"
        )));
    }
    Ok(name.to_owned())
}

fn checked_folder(what: &str, folder: &str) -> Result<String> {
    let path = Path::new(folder.trim());
    if !path.is_absolute() {
        return Err(bad(format!("{what} {folder:?} must be an absolute path")));
    }
    if !path.is_dir() {
        return Err(bad(format!("{what} {folder:?} is not a folder")));
    }
    Ok(path.display().to_string())
}

impl Service {
    /// Every schedule, by name.
    pub fn list_schedules(&self) -> Result<Vec<ScheduleView>> {
        let rows = rows::list(&self.db())?;
        Ok(rows.into_iter().map(|r| self.schedule_view(r)).collect())
    }

    /// One schedule by id or name.
    pub fn get_schedule(&self, id_or_name: &str) -> Result<ScheduleView> {
        Ok(self.schedule_view(self.schedule_row(id_or_name)?))
    }

    pub(super) fn schedule_row(&self, id_or_name: &str) -> Result<ScheduleRow> {
        rows::get(&self.db(), id_or_name)?
            .ok_or_else(|| CoreError::not_found("schedule", id_or_name))
    }

    fn schedule_view(&self, r: ScheduleRow) -> ScheduleView {
        let (target_kind, target, target_label) = match (&r.workflow_id, &r.flow_name) {
            (Some(wf), _) => {
                let label = crate::store::get_workflow(&self.db(), wf)
                    .ok()
                    .flatten()
                    .and_then(|w| w.name)
                    .unwrap_or_else(|| wf.clone());
                ("workflow", wf.clone(), label)
            }
            (None, flow) => {
                let flow = flow.clone().unwrap_or_default();
                ("flow", flow.clone(), flow)
            }
        };
        let next = match (r.paused, r.next_run_ms, r.retry_at_ms) {
            (true, _, _) => None,
            (false, Some(n), Some(retry)) => Some(n.max(retry)),
            (false, n, retry) => n.or(retry),
        };
        ScheduleView {
            id: r.id,
            slug: crate::file_names::slug(&r.name),
            name: r.name,
            target_kind: target_kind.into(),
            target,
            target_label,
            cron: r.cron,
            folder: r.folder,
            output_folder: r.output_folder,
            paused: r.paused,
            next_run_at: next.map(|ms| format_rfc3339(u64::try_from(ms).unwrap_or(0))),
            last_run_at: r.last_run_at,
            last_run_id: r.last_run_id,
            last_status: r.last_status,
            last_error: r.last_error,
            failures: r.failures,
            stale: r.failures > 0 && r.last_success_at.is_some(),
            last_success_at: r.last_success_at,
        }
    }

    /// Creates a schedule after checking that it can run: the workflow is
    /// approved (and a watched folder can give it its only required input),
    /// the flow exists, the cron expression parses, the folders exist. A
    /// watched folder's files present now count as seen: only new and
    /// changed files run.
    pub fn create_schedule(&self, input: ScheduleInput) -> Result<ScheduleView> {
        let name = checked_name(&input.name)?;
        let output_folder = match input.output_folder.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(f) => Some(checked_folder("output folder", f)?),
        };
        let blank = |v: &Option<String>| {
            v.as_deref()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        let (workflow_id, flow_name) = match (blank(&input.workflow), blank(&input.flow)) {
            (Some(wf), None) => (Some(self.find_workflow(&wf)?), None),
            (None, Some(flow)) => {
                self.flow_definition(&flow)?;
                (None, Some(flow))
            }
            _ => return Err(bad("give either a workflow or a flow to schedule".into())),
        };
        let now = self.now_ms_i64();
        let (cron, folder, next_run_ms) = match (blank(&input.cron), blank(&input.folder)) {
            (Some(expr), None) => {
                let parsed = parse_cron(&expr)?;
                (Some(expr), None, Some(next_after(&parsed, now)?))
            }
            (None, Some(folder)) => (None, Some(checked_folder("watched folder", &folder)?), None),
            _ => {
                return Err(bad(
                    "give either a cron expression or a folder to watch".into()
                ));
            }
        };
        if let Some(wf) = &workflow_id {
            self.check_schedulable(wf, folder.is_some())?;
        } else if folder.is_some() {
            return Err(bad(
                "a flow takes no input file: schedule it with a cron expression".into(),
            ));
        }
        if rows::get(&self.db(), &name)?.is_some() {
            return Err(CoreError::Conflict(format!(
                "a schedule named {name:?} exists"
            )));
        }
        let slug = crate::file_names::slug(&name);
        if let Some(other) = rows::list(&self.db())?
            .into_iter()
            .find(|r| crate::file_names::slug(&r.name) == slug)
        {
            return Err(CoreError::Conflict(format!(
                "schedule name {name:?} gets the file name {slug:?}, which schedule {:?} has; choose another name",
                other.name
            )));
        }
        let row = ScheduleRow {
            id: self.id("sch"),
            name,
            workflow_id,
            flow_name,
            cron,
            folder,
            output_folder,
            paused: false,
            next_run_ms,
            failures: 0,
            retry_at_ms: None,
            last_run_at: None,
            last_run_id: None,
            last_status: None,
            last_error: None,
            last_success_at: None,
            created_at: self.now(),
        };
        rows::insert(&self.db(), &row)?;
        if row.folder.is_some() {
            self.mark_present_files_seen(&row)?;
        }
        Ok(self.schedule_view(row))
    }

    /// A scheduled workflow must be approved; a watched folder gives it one
    /// file, so it must take a file and need nothing else; cron gives it
    /// nothing, so it must need nothing.
    fn check_schedulable(&self, workflow_id: &str, watched: bool) -> Result<()> {
        let fields = self.active_version(workflow_id)?.fields;
        let is_file = |t: &FieldType| matches!(t, FieldType::File | FieldType::Files);
        let files = fields.iter().filter(|f| is_file(&f.field_type)).count();
        let needs: Vec<&str> = fields
            .iter()
            .filter(|f| f.required && !(watched && is_file(&f.field_type)))
            .map(|f| f.name.as_str())
            .collect();
        if watched && files != 1 {
            return Err(bad(format!(
                "workflow {workflow_id} takes {files} file inputs; a watched folder runs a workflow with exactly one"
            )));
        }
        if !needs.is_empty() {
            let how = if watched {
                "a watched folder"
            } else {
                "a cron schedule"
            };
            return Err(bad(format!(
                "workflow {workflow_id} needs input(s) {} that {how} cannot give",
                needs.join(", ")
            )));
        }
        Ok(())
    }

    /// Pauses a schedule: it runs nothing until resumed.
    pub fn pause_schedule(&self, id_or_name: &str) -> Result<ScheduleView> {
        let row = self.schedule_row(id_or_name)?;
        rows::set_paused(&self.db(), &row.id, true, row.next_run_ms)?;
        self.get_schedule(&row.id)
    }

    /// Resumes a schedule: a cron schedule fires at its next time from now
    /// (not once per time missed), and the back-off starts over.
    pub fn resume_schedule(&self, id_or_name: &str) -> Result<ScheduleView> {
        let row = self.schedule_row(id_or_name)?;
        let next = match &row.cron {
            Some(expr) => Some(next_after(&parse_cron(expr)?, self.now_ms_i64())?),
            None => None,
        };
        rows::set_paused(&self.db(), &row.id, false, next)?;
        self.get_schedule(&row.id)
    }

    /// Removes a schedule and its record of files (its runs stay in the history).
    pub fn delete_schedule(&self, id_or_name: &str) -> Result<Vec<ScheduleView>> {
        let row = self.schedule_row(id_or_name)?;
        rows::delete(&self.db(), &row.id)?;
        self.list_schedules()
    }

    /// What started `run_id` (manual when no schedule did).
    pub(super) fn run_trigger(&self, run_id: &str) -> RunTrigger {
        let db = self.db();
        match rows::trigger(&db, run_id).ok().flatten() {
            Some(t) => RunTrigger {
                schedule: t
                    .schedule_id
                    .as_deref()
                    .and_then(|id| rows::get(&db, id).ok().flatten())
                    .map(|s| s.name),
                kind: t.kind,
                file: t.file,
            },
            None => RunTrigger {
                kind: "manual".into(),
                schedule: None,
                file: None,
            },
        }
    }

    /// Records that `run_id` was started by the operating system's timer of
    /// schedule `id_or_name` (`maskflow run --schedule`, which `maskflow
    /// schedule install` writes): its trigger, and the schedule's last run.
    pub fn record_timer_run(
        &self,
        id_or_name: &str,
        run_id: &str,
        status: &str,
        error: Option<&str>,
    ) -> Result<()> {
        let row = self.schedule_row(id_or_name)?;
        let trigger = rows::TriggerRow {
            run_id: run_id.to_owned(),
            schedule_id: Some(row.id.clone()),
            kind: "cron".into(),
            file: None,
        };
        let now = self.now();
        let db = self.db();
        rows::put_trigger(&db, &trigger, &now)?;
        let outcome = rows::Outcome {
            run_id: Some(run_id),
            status,
            error,
            failures: if error.is_some() { row.failures + 1 } else { 0 },
            retry_at_ms: None,
            at: &now,
        };
        rows::record_outcome(&db, &row.id, &outcome)?;
        Ok(())
    }

    pub(super) fn now_ms_i64(&self) -> i64 {
        i64::try_from(self.inner.clock.now_ms()).unwrap_or(i64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_and_is_capped() {
        assert_eq!(backoff_ms(1), 60_000);
        assert_eq!(backoff_ms(2), 120_000);
        assert_eq!(backoff_ms(3), 240_000);
        assert_eq!(backoff_ms(7), BACKOFF_CAP_MS);
        assert_eq!(backoff_ms(1000), BACKOFF_CAP_MS);
    }

    #[test]
    fn cron_expressions_are_checked_and_step_in_local_time() {
        assert!(parse_cron("* * *").is_err());
        assert!(parse_cron("61 * * * *").is_err());
        assert!(parse_cron("0 0 7 * * *").is_err(), "six fields are refused");
        let every_quarter = parse_cron("*/15 * * * *").expect("parse");
        // Every UTC offset is a whole number of quarter hours.
        let t = 1_700_000_000_000_i64; // 22:13:20 UTC
        let next = next_after(&every_quarter, t).expect("next");
        assert_eq!(next, 1_700_000_100_000, "22:15:00");
        assert_eq!(
            next_after(&every_quarter, next).expect("next"),
            next + 900_000
        );
    }

    #[test]
    fn names_are_kept_as_written_and_only_their_safe_names_name_units() {
        assert!(checked_name("daily-report_2").is_ok());
        // Issue 44: spaces and accents are a person's name, kept as written.
        assert_eq!(checked_name(" a b ").expect("spaces"), "a b");
        assert_eq!(checked_name("Relevé März").expect("accents"), "Relevé März");
        assert!(checked_name("").is_err());
        assert!(checked_name("a\nb").is_err());
        assert!(checked_name(&"x".repeat(MAX_SCHEDULE_NAME + 1)).is_err());
        // A path in a name never reaches a file name: its safe name does.
        assert_eq!(crate::file_names::slug("../x"), "x");
    }
}
