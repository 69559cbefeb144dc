//! Workflows and their versions as the user sees them: approve, edit,
//! read, list and rename, and the conversation and events they share.

use super::*;

impl Service {
    /// Approves a built version: it becomes `approved` and active, and every
    /// other version of the workflow is archived.
    pub fn approve(&self, workflow_id: &str, version_id: &str) -> Result<WorkflowView> {
        self.check_version_of(workflow_id, version_id)?;
        let workflow_id = workflow_id.to_owned();
        let _busy = self.claim(&workflow_id)?;
        // Read before the transaction: hashing a large file takes a while.
        let hashes = self.hash_inputs(version_id)?;
        let now = self.now();
        let mut db = self.db();
        let tx = db.transaction()?;
        let all = store::versions_of(&tx, &workflow_id)?;
        let mut target = all
            .iter()
            .find(|v| v.id == version_id)
            .cloned()
            .ok_or_else(|| CoreError::not_found("version", version_id))?;
        if target.status == Status::Archived {
            return Err(CoreError::Archived(target.id));
        }
        versions::apply(target.status, VersionEvent::Approve)?;
        let mut archived = Vec::new();
        for other in all
            .iter()
            .filter(|v| v.id != version_id && v.status != Status::Archived)
        {
            let mut other = other.clone();
            other.is_active = false;
            move_version(&tx, &mut other, VersionEvent::Archive, &now)?;
            archived.push(other.id);
        }
        target.is_active = true;
        move_version(&tx, &mut target, VersionEvent::Approve, &now)?;
        store::input_hashes::put(&tx, version_id, &hashes)?;
        tx.commit()?;
        drop(db);
        for id in archived {
            self.publish_status(&workflow_id, &id, Status::Archived, None);
        }
        self.publish_status(&workflow_id, version_id, Status::Approved, None);
        self.write_session_state(&workflow_id, version_id);
        self.get_workflow(&workflow_id)
    }

    /// Edits a version (seed 000's "Edit"): creates version N+1 in
    /// `validated` with the same extracts; the conversation continues.
    pub fn edit(&self, workflow_id: &str, version_id: &str) -> Result<CreatedVersion> {
        self.check_version_of(workflow_id, version_id)?;
        let workflow_id = workflow_id.to_owned();
        let _busy = self.claim(&workflow_id)?;
        let now = self.now();
        let mut db = self.db();
        let tx = db.transaction()?;
        let all = store::versions_of(&tx, &workflow_id)?;
        let from = all
            .iter()
            .find(|v| v.id == version_id)
            .cloned()
            .ok_or_else(|| CoreError::not_found("version", version_id))?;
        if from.status == Status::Archived {
            return Err(CoreError::Archived(from.id));
        }
        let next = self.new_version_from(&tx, from, &all, &now)?;
        tx.commit()?;
        drop(db);
        self.publish_status(&workflow_id, &next.id, next.status, None);
        self.write_session_state(&workflow_id, &next.id);
        Ok(CreatedVersion {
            workflow_id,
            version_id: next.id,
            status: next.status,
            preflight: None,
        })
    }

    /// A workflow with its current version, versions and conversation.
    pub fn get_workflow(&self, workflow_id: &str) -> Result<WorkflowView> {
        let db = self.db();
        let w = store::get_workflow(&db, workflow_id)?
            .ok_or_else(|| CoreError::not_found("workflow", workflow_id))?;
        let all = store::versions_of(&db, workflow_id)?;
        let current = current_of(&all)
            .ok_or_else(|| CoreError::Corrupt(format!("workflow {workflow_id} has no version")))?
            .clone();
        let file_ids = store::file_ids_of(&db, &current.id)?;
        let messages = store::messages_of(&db, workflow_id)?
            .into_iter()
            .map(MessageView::from)
            .collect();
        Ok(WorkflowView {
            id: w.id,
            name: w.name,
            description: w.description,
            label: w.label,
            active_version_id: all.iter().find(|v| v.is_active).map(|v| v.id.clone()),
            versions: all
                .iter()
                .map(|v| VersionSummary::within(v, &all))
                .collect(),
            current_version: {
                let mut view = VersionView::from_row(current, file_ids)?;
                self.attach_build(&db, &mut view);
                view
            },
            messages,
            created_at: w.created_at,
            updated_at: w.updated_at,
        })
    }

    /// One version of a workflow in full (any status, archived ones too),
    /// e.g. to compare two versions' scripts.
    pub fn get_version(&self, workflow_id: &str, version_id: &str) -> Result<VersionView> {
        self.check_version_of(workflow_id, version_id)?;
        let db = self.db();
        let row = store::get_version(&db, version_id)?
            .ok_or_else(|| CoreError::not_found("version", version_id))?;
        let file_ids = store::file_ids_of(&db, version_id)?;
        let mut view = VersionView::from_row(row, file_ids)?;
        self.attach_build(&db, &mut view);
        Ok(view)
    }

    /// Every workflow, newest first.
    pub fn list_workflows(&self) -> Result<Vec<WorkflowSummary>> {
        let db = self.db();
        let mut out = Vec::new();
        for w in store::list_workflows(&db)? {
            let all = store::versions_of(&db, &w.id)?;
            let Some(current) = current_of(&all) else {
                continue;
            };
            let active = all.iter().find(|v| v.is_active).map(|v| v.id.clone());
            out.push(WorkflowSummary::new(w, current, active));
        }
        Ok(out)
    }

    /// Renames, re-describes or relabels a workflow.
    pub fn update_workflow(&self, workflow_id: &str, patch: WorkflowPatch) -> Result<WorkflowView> {
        let clean = |field: &str, v: Option<String>, allow_empty: bool| -> Result<Option<String>> {
            match v.map(|s| s.trim().to_owned()) {
                Some(s) if s.is_empty() && !allow_empty => Err(CoreError::InvalidRequest(format!(
                    "{field} must not be empty"
                ))),
                Some(s) if s.chars().count() > 2000 => {
                    Err(CoreError::InvalidRequest(format!("{field} is too long")))
                }
                other => Ok(other),
            }
        };
        let name = clean("name", patch.name, false)?;
        let description = clean("description", patch.description, false)?;
        let label = clean("label", patch.label, true)?;
        if let Some(n) = &name {
            crate::conversation::spec::check_name(n).map_err(CoreError::InvalidRequest)?;
        }
        {
            let now = self.now();
            let db = self.db();
            let mut w = store::get_workflow(&db, workflow_id)?
                .ok_or_else(|| CoreError::not_found("workflow", workflow_id))?;
            if let Some(n) = name {
                w.name = Some(n);
            }
            if let Some(d) = description {
                w.description = Some(d);
            }
            if let Some(l) = label {
                w.label = (!l.is_empty()).then_some(l);
            }
            w.updated_at = now;
            store::update_workflow_meta(&db, &w)?;
        }
        self.get_workflow(workflow_id)
    }

    pub(super) fn check_version_of(&self, workflow_id: &str, version_id: &str) -> Result<()> {
        let db = self.db();
        if store::get_workflow(&db, workflow_id)?.is_none() {
            return Err(CoreError::not_found("workflow", workflow_id));
        }
        match store::get_version(&db, version_id)? {
            Some(v) if v.workflow_id == workflow_id => Ok(()),
            _ => Err(CoreError::not_found("version", version_id)),
        }
    }

    pub(super) fn versions_or_404(
        &self,
        conn: &Connection,
        workflow_id: &str,
    ) -> Result<Vec<VersionRow>> {
        if store::get_workflow(conn, workflow_id)?.is_none() {
            return Err(CoreError::not_found("workflow", workflow_id));
        }
        Ok(store::versions_of(conn, workflow_id)?)
    }

    pub(super) fn history(&self, workflow_id: &str) -> Result<Vec<ChatMessage>> {
        Ok(store::messages_of(&self.db(), workflow_id)?
            .into_iter()
            // Maskflow's own notes are for the user, not the LLM.
            .filter(|m| m.role != super::outcomes::NOTICE)
            .map(|m| {
                // A stored user message is what the user typed; the rest
                // are replies (the LLM's, and Maskflow's own about them).
                if m.role == "user" {
                    ChatMessage::user_words(m.content)
                } else {
                    ChatMessage::new(ChatRole::Assistant, m.content)
                }
            })
            .collect())
    }

    pub(super) fn add_message(
        &self,
        conn: &Connection,
        workflow_id: &str,
        version_id: &str,
        role: &str,
        content: &str,
        now: &str,
    ) -> Result<MessageView> {
        let row = MessageRow {
            id: self.id("msg"),
            workflow_id: workflow_id.to_owned(),
            version_id: Some(version_id.to_owned()),
            role: role.to_owned(),
            content: content.to_owned(),
            created_at: now.to_owned(),
        };
        store::insert_message(conn, &row)?;
        Ok(row.into())
    }

    pub(super) fn delta_sink(
        &self,
        workflow_id: &str,
        role: Role,
    ) -> impl Fn(&str) + Send + Sync + use<> {
        let events = self.inner.events.clone();
        let workflow_id = workflow_id.to_owned();
        let role = role.key();
        move |delta: &str| {
            events.publish(Event::MessageDelta {
                workflow_id: workflow_id.clone(),
                role: role.clone(),
                delta: delta.to_owned(),
            })
        }
    }

    pub(super) fn publish_status(
        &self,
        workflow_id: &str,
        version_id: &str,
        status: Status,
        reason: Option<String>,
    ) {
        self.inner.events.publish(Event::StatusChanged {
            workflow_id: workflow_id.to_owned(),
            version_id: version_id.to_owned(),
            status,
            reason,
        });
    }

    pub(super) fn publish_messages(
        &self,
        workflow_id: &str,
        messages: impl IntoIterator<Item = MessageView>,
    ) {
        for message in messages {
            self.inner.events.publish(Event::Message {
                workflow_id: workflow_id.to_owned(),
                message,
            });
        }
    }
}
