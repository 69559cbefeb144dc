//! Rollback (issue 18): "Restore" on an earlier version makes a new version
//! with that version's script, fields and execution (its Python
//! requirements included), which is tested on the real files like any
//! build and waits for the user's approval. The version it came from is
//! recorded (`origin = restored`, `origin_version_id`).

use serde_json::Value;

use super::builds::Drive;
use super::{CreatedVersion, Service, move_version};
use crate::conversation::spec::{Execution, Field, WorkflowSpec};
use crate::error::{CoreError, Result};
use crate::store::{self, Origin, VersionRow};
use crate::versions::{self, Status, VersionEvent};

/// What the assistant says in the conversation when a version is restored.
pub fn restored_message(from: i64, to: i64) -> String {
    format!(
        "Restored version {from} as version {to}: its script is being tested on your files; \
         approve it when the test has passed."
    )
}

impl Service {
    /// Restores an earlier (archived) version as a new version in
    /// `building`; the copy is tested in the background. The workflow's
    /// draft, if any, is archived (a running build is a conflict); the
    /// active version stays in use until the restored one is approved.
    pub fn restore(&self, workflow_id: &str, version_id: &str) -> Result<CreatedVersion> {
        self.check_version_of(workflow_id, version_id)?;
        let _busy = self.claim(workflow_id)?;
        let now = self.now();
        let mut db = self.db();
        let tx = db.transaction()?;
        let all = store::versions_of(&tx, workflow_id)?;
        let mut from = all
            .iter()
            .find(|v| v.id == version_id)
            .cloned()
            .ok_or_else(|| CoreError::not_found("version", version_id))?;
        let spec = restorable(&tx, &from)?;
        if let Some(building) = all.iter().find(|v| v.status == Status::Building) {
            return Err(CoreError::Conflict(format!(
                "version {} is being built; wait until the build finishes",
                building.version
            )));
        }
        // The source stays archived; the table says it may be restored.
        move_version(&tx, &mut from, VersionEvent::Restore, &now)?;
        let mut archived = Vec::new();
        for draft in all.iter().filter(|v| v.status.is_draft()) {
            let mut draft = draft.clone();
            move_version(&tx, &mut draft, VersionEvent::Archive, &now)?;
            archived.push(draft.id);
        }
        let number = all.iter().map(|v| v.version).max().unwrap_or(0) + 1;
        let next = VersionRow {
            id: self.id("wv"),
            workflow_id: workflow_id.to_owned(),
            version: number,
            status: versions::INITIAL_AFTER_RESTORE,
            is_active: false,
            file_extracts: from.file_extracts.clone(),
            fields: from.fields.clone(),
            execution: from.execution.clone(),
            script: from.script.clone(),
            rejection_reason: None,
            failure_reason: None,
            created_at: now.clone(),
            updated_at: now.clone(),
            origin: Origin::Restored,
            origin_version_id: Some(from.id.clone()),
        };
        store::insert_version(&tx, &next)?;
        store::link_files(&tx, &next.id, &store::file_ids_of(&tx, &from.id)?)?;
        // The same pinned Python packages: a restore re-runs what was approved.
        if let Some(lock) = store::python_locks::get_lock(&tx, &from.id)? {
            store::python_locks::put_lock(&tx, &next.id, &lock, &now)?;
        }
        let note = self.add_message(
            &tx,
            workflow_id,
            &next.id,
            "assistant",
            &restored_message(from.version, number),
            &now,
        )?;
        tx.commit()?;
        drop(db);
        for id in archived {
            self.publish_status(workflow_id, &id, Status::Archived, None);
        }
        self.publish_messages(workflow_id, [note]);
        self.publish_status(workflow_id, &next.id, next.status, None);
        let service = self.clone();
        let (wf, vid) = (workflow_id.to_owned(), next.id.clone());
        tokio::spawn(async move {
            service
                .run_build(&wf, &vid, Drive::Retest(Box::new(spec)))
                .await
        });
        Ok(CreatedVersion {
            workflow_id: workflow_id.to_owned(),
            version_id: next.id,
            status: next.status,
            preflight: None,
        })
    }
}

/// The workflow a version holds, or why it cannot be restored.
fn restorable(conn: &rusqlite::Connection, v: &VersionRow) -> Result<WorkflowSpec> {
    if v.status != Status::Archived {
        versions::apply(v.status, VersionEvent::Restore)?;
    }
    let never_built = || {
        CoreError::Conflict(format!(
            "version {} has no script to restore (it was never built)",
            v.version
        ))
    };
    let script = v.script.clone().ok_or_else(never_built)?;
    let fields: Vec<Field> = parse(v.fields.as_ref().ok_or_else(never_built)?, "fields", v)?;
    let execution: Execution = parse(
        v.execution.as_ref().ok_or_else(never_built)?,
        "execution",
        v,
    )?;
    let meta = store::get_workflow(conn, &v.workflow_id)?;
    Ok(WorkflowSpec {
        name: meta
            .as_ref()
            .and_then(|w| w.name.clone())
            .unwrap_or_default(),
        description: meta.and_then(|w| w.description).unwrap_or_default(),
        script,
        fields,
        execution,
    })
}

fn parse<T: serde::de::DeserializeOwned>(value: &Value, what: &str, v: &VersionRow) -> Result<T> {
    serde_json::from_value(value.clone())
        .map_err(|e| CoreError::Corrupt(format!("{what} of version {}: {e}", v.id)))
}
