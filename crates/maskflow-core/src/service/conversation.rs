//! The conversation of seed 000: creating a workflow, sending messages
//! (validator → clarifier → build) and finishing a build.

use super::builds::build_waiter;
use super::*;
use crate::builder::call::{self, Turn};

/// The user's message `content` a conversation call works on.
fn turn(content: &str, stored: bool) -> Turn {
    Turn {
        content: content.to_owned(),
        stored,
    }
}

impl Service {
    /// Creates a workflow and its first version (`validating`) from the
    /// extracts the user approved and the uploaded files behind them.
    pub fn create_workflow(&self, request: CreateWorkflow) -> Result<CreatedVersion> {
        if request.file_extracts.len() > MAX_FILES || request.file_ids.len() > MAX_FILES {
            return Err(CoreError::InvalidRequest(format!(
                "a workflow can start from at most {MAX_FILES} files"
            )));
        }
        let unique: HashSet<&String> = request.file_ids.iter().collect();
        if unique.len() != request.file_ids.len() {
            return Err(CoreError::InvalidRequest(
                "file_ids lists a file twice".into(),
            ));
        }
        self.notes_name_no_one(&request)?;
        let now = self.now();
        let workflow_id = self.id("wf");
        let version_id = self.id("wv");
        let mut db = self.db();
        let tx = db.transaction()?;
        let extracts = approved_extracts(&tx, &request)?;
        store::insert_workflow(
            &tx,
            &WorkflowRow {
                id: workflow_id.clone(),
                name: None,
                description: None,
                label: None,
                created_at: now.clone(),
                updated_at: now.clone(),
            },
        )?;
        store::insert_version(
            &tx,
            &VersionRow {
                id: version_id.clone(),
                workflow_id: workflow_id.clone(),
                version: 1,
                status: versions::INITIAL,
                is_active: false,
                file_extracts: Value::Array(extracts),
                fields: None,
                execution: None,
                script: None,
                rejection_reason: None,
                failure_reason: None,
                created_at: now.clone(),
                updated_at: now,
                origin: store::Origin::Created,
                origin_version_id: None,
            },
        )?;
        store::link_files(&tx, &version_id, &request.file_ids)?;
        tx.commit()?;
        drop(db);
        self.publish_status(&workflow_id, &version_id, versions::INITIAL, None);
        self.write_session_state(&workflow_id, &version_id);
        Ok(CreatedVersion {
            workflow_id,
            version_id,
            status: versions::INITIAL,
            // Shown before the first message; a failing probe is not a
            // failed creation (the message gate checks again).
            preflight: self.recent_preflight().ok(),
        })
    }

    /// Sends the user's message and routes it by the draft's status (seed
    /// 000): validator, then clarifier, then a background build. A second
    /// call for the same workflow while one runs is a conflict at once.
    pub async fn send_message(&self, workflow_id: &str, content: &str) -> Result<MessageReply> {
        self.send_message_with(workflow_id, content, false).await
    }

    /// [`Service::send_message`]; with `confirm_privacy`, the user chose to
    /// send `content` even though the privacy guard found values from their
    /// files in it (only their own text is let through).
    pub async fn send_message_with(
        &self,
        workflow_id: &str,
        content: &str,
        confirm_privacy: bool,
    ) -> Result<MessageReply> {
        let content = checked_content(content)?;
        let _busy = self.claim(workflow_id)?;
        self.claimed_message(workflow_id, content, confirm_privacy)
            .await
    }

    /// The message `content` (checked) to the workflow claimed by the caller.
    pub(super) async fn claimed_message(
        &self,
        workflow_id: &str,
        content: &str,
        confirm_privacy: bool,
    ) -> Result<MessageReply> {
        let (version, created) = self.draft_for_message(workflow_id)?;
        if let Some(v) = &created {
            self.publish_status(workflow_id, &v.id, v.status, None);
        }
        let mut history = self.history(workflow_id)?;
        history.push(ChatMessage::user_words(content));
        if confirm_privacy {
            self.confirm_privacy(workflow_id, content)?;
        }
        let turn = self
            .message_turn(workflow_id, content, &history, version, false)
            .await;
        if let Err(e) = &turn {
            // The version stays where the user can send again (validating,
            // validated or clarifying); the chat says so (#28).
            self.notice_message_failed(workflow_id, e);
        }
        turn
    }

    /// The validator (while the version is validating), then the
    /// clarifier, on the user's message `content` (last in `history`;
    /// `stored` when it is already in the conversation). Their manual
    /// prompts name the version's build and the call, so one cut off by a
    /// restart can be answered and the turn goes on (`service::manual`).
    pub(super) async fn message_turn(
        &self,
        workflow_id: &str,
        content: &str,
        history: &[ChatMessage],
        mut version: VersionRow,
        stored: bool,
    ) -> Result<MessageReply> {
        let mut reductions = Vec::new();
        let user_stored = if version.status == Status::Validating {
            let validated =
                self.validate_turn(workflow_id, content, history, &mut version, &mut reductions);
            if let Some(rejected) = validated.await? {
                return Ok(rejected);
            }
            true
        } else {
            stored
        };
        self.clarify_turn(
            workflow_id,
            content,
            history,
            version,
            reductions,
            user_stored,
        )
        .await
    }

    /// The validator's turn: stores the user's message and moves the version
    /// to validated, or to rejected — then the reply to send is returned.
    async fn validate_turn(
        &self,
        workflow_id: &str,
        content: &str,
        history: &[ChatMessage],
        version: &mut VersionRow,
        context_reductions: &mut Vec<crate::fit::ContextReduction>,
    ) -> Result<Option<MessageReply>> {
        // The call, named for its manual prompt (`builder::call`).
        let tag = call::conversation("validator", history, turn(content, false));
        let llm = self
            .llm(&Role::Validator, Some(workflow_id), Some(&version.id), None)?
            .tagged(tag.for_the_call())
            .waited_on_by(build_waiter(workflow_id, &version.id));
        let request = self
            .fitted_request(
                &llm,
                &Role::Validator,
                workflow_id,
                &version.file_extracts,
                context_reductions,
                &|e| prompts::validator_request(e, history),
            )
            .await?;
        let verdict: Feasibility = ask_json(
            &llm,
            request,
            &Feasibility::check,
            &self.delta_sink(workflow_id, Role::Validator),
        )
        .await?;
        let now = self.now();
        let mut db = self.db();
        let tx = db.transaction()?;
        let user = self.add_message(&tx, workflow_id, &version.id, "user", content, &now)?;
        if !verdict.feasible {
            let reason = verdict
                .reason
                .map(|r| r.trim().to_owned())
                .unwrap_or_default();
            version.rejection_reason = Some(reason.clone());
            move_version(&tx, version, VersionEvent::Infeasible, &now)?;
            let reply =
                self.add_message(&tx, workflow_id, &version.id, "assistant", &reason, &now)?;
            tx.commit()?;
            drop(db);
            self.publish_messages(workflow_id, [user, reply]);
            self.publish_status(
                workflow_id,
                &version.id,
                Status::Rejected,
                Some(reason.clone()),
            );
            self.write_session_state(workflow_id, &version.id);
            return Ok(Some(MessageReply {
                status: Status::Rejected,
                message: reason,
                context_reductions: std::mem::take(context_reductions),
            }));
        }
        move_version(&tx, version, VersionEvent::Feasible, &now)?;
        tx.commit()?;
        drop(db);
        self.publish_messages(workflow_id, [user]);
        self.publish_status(workflow_id, &version.id, version.status, None);
        self.write_session_state(workflow_id, &version.id);
        Ok(None)
    }

    /// The clarifier's turn: a question back, or the start of the build.
    async fn clarify_turn(
        &self,
        workflow_id: &str,
        content: &str,
        history: &[ChatMessage],
        mut version: VersionRow,
        mut context_reductions: Vec<crate::fit::ContextReduction>,
        user_stored: bool,
    ) -> Result<MessageReply> {
        let tag = call::conversation("clarifier", history, turn(content, user_stored));
        let llm = self
            .llm(&Role::Clarifier, Some(workflow_id), Some(&version.id), None)?
            .tagged(tag.for_the_call())
            .waited_on_by(build_waiter(workflow_id, &version.id));
        let request = self
            .fitted_request(
                &llm,
                &Role::Clarifier,
                workflow_id,
                &version.file_extracts,
                &mut context_reductions,
                &|e| prompts::clarifier_request(e, history),
            )
            .await?;
        let verdict: Clarification = ask_json(
            &llm,
            request,
            &Clarification::check,
            &self.delta_sink(workflow_id, Role::Clarifier),
        )
        .await?;
        let now = self.now();
        let mut db = self.db();
        let tx = db.transaction()?;
        let mut published = Vec::new();
        if !user_stored {
            published.push(self.add_message(
                &tx,
                workflow_id,
                &version.id,
                "user",
                content,
                &now,
            )?);
        }
        if version.status == Status::Validated {
            move_version(&tx, &mut version, VersionEvent::StartClarifying, &now)?;
        }
        let reply_text = if verdict.needs_clarification {
            move_version(&tx, &mut version, VersionEvent::AskQuestion, &now)?;
            verdict.question.unwrap_or_default().trim().to_owned()
        } else {
            move_version(&tx, &mut version, VersionEvent::StartBuild, &now)?;
            BUILDING_MESSAGE.to_owned()
        };
        published.push(self.add_message(
            &tx,
            workflow_id,
            &version.id,
            "assistant",
            &reply_text,
            &now,
        )?);
        tx.commit()?;
        drop(db);
        self.publish_messages(workflow_id, published);
        self.publish_status(workflow_id, &version.id, version.status, None);
        self.write_session_state(workflow_id, &version.id);
        if version.status == Status::Building {
            let service = self.clone();
            let (wf, vid) = (workflow_id.to_owned(), version.id.clone());
            tokio::spawn(async move { service.build(wf, vid).await });
        }
        Ok(MessageReply {
            status: version.status,
            message: reply_text,
            context_reductions,
        })
    }

    /// The version a new message works on, creating version N+1 when the
    /// current one is built, failed or approved. Returns it and, when it was
    /// just created, the new version too.
    pub(super) fn draft_for_message(
        &self,
        workflow_id: &str,
    ) -> Result<(VersionRow, Option<VersionRow>)> {
        let now = self.now();
        let mut db = self.db();
        let tx = db.transaction()?;
        let all = self.versions_or_404(&tx, workflow_id)?;
        let current = current_of(&all)
            .ok_or_else(|| CoreError::Corrupt(format!("workflow {workflow_id} has no version")))?
            .clone();
        let result = match current.status {
            Status::Validating | Status::Validated | Status::Clarifying => (current, None),
            Status::Building => {
                return Err(CoreError::Conflict(
                    "the workflow is being built; wait until the build finishes".into(),
                ));
            }
            Status::Rejected => {
                return Err(CoreError::Conflict(format!(
                    "this workflow was rejected ({}); start a new workflow",
                    current
                        .rejection_reason
                        .as_deref()
                        .unwrap_or("not feasible")
                )));
            }
            Status::Archived => {
                return Err(CoreError::Archived(current.id));
            }
            Status::PendingUserApproval | Status::Failed | Status::Approved => {
                let next = self.new_version_from(&tx, current, &all, &now)?;
                (next.clone(), Some(next))
            }
        };
        tx.commit()?;
        Ok(result)
    }

    /// Edit (seed 000): `from` moves by the `edit` row of the table and
    /// version N+1 starts in `validated` with the same extracts and files.
    pub(super) fn new_version_from(
        &self,
        tx: &Transaction<'_>,
        mut from: VersionRow,
        all: &[VersionRow],
        now: &str,
    ) -> Result<VersionRow> {
        if let Some(draft) = all.iter().find(|v| v.status.is_draft() && v.id != from.id) {
            return Err(CoreError::Conflict(format!(
                "version {} is already being drafted; continue that one",
                draft.version
            )));
        }
        move_version(tx, &mut from, VersionEvent::Edit, now)?;
        let next = VersionRow {
            id: self.id("wv"),
            workflow_id: from.workflow_id.clone(),
            version: all.iter().map(|v| v.version).max().unwrap_or(0) + 1,
            status: versions::INITIAL_AFTER_EDIT,
            is_active: false,
            file_extracts: from.file_extracts.clone(),
            fields: None,
            execution: None,
            script: None,
            rejection_reason: None,
            failure_reason: None,
            created_at: now.to_owned(),
            updated_at: now.to_owned(),
            origin: store::Origin::Edited,
            origin_version_id: Some(from.id.clone()),
        };
        store::insert_version(tx, &next)?;
        store::link_files(tx, &next.id, &store::file_ids_of(tx, &from.id)?)?;
        if from.status == Status::Archived {
            self.publish_status(&from.workflow_id, &from.id, from.status, None);
        }
        Ok(next)
    }

    /// The background build: the phase engine (`crate::builder`) generates,
    /// tests on the real files and revises, then the version moves to
    /// `pending_user_approval` or `failed`.
    pub(super) async fn build(self, workflow_id: String, version_id: String) {
        self.run_build(&workflow_id, &version_id, builds::Drive::Start)
            .await;
    }

    pub(super) fn finish_build(
        &self,
        workflow_id: &str,
        version_id: &str,
        outcome: Result<WorkflowSpec>,
    ) -> Result<()> {
        let now = self.now();
        let mut db = self.db();
        let tx = db.transaction()?;
        let Some(mut version) = store::get_version(&tx, version_id)? else {
            return Ok(()); // deleted meanwhile
        };
        if version.status != Status::Building {
            return Ok(());
        }
        let mut published = Vec::new();
        let reason = match outcome {
            Ok(spec) => {
                version.fields = Some(to_json(&spec.fields)?);
                version.execution = Some(to_json(&spec.execution)?);
                version.script = Some(spec.script.clone());
                move_version(&tx, &mut version, VersionEvent::BuildSucceeded, &now)?;
                if let Some(mut wf) = store::get_workflow(&tx, workflow_id)?
                    && wf.name.is_none()
                {
                    wf.name = Some(spec.name.trim().to_owned());
                    wf.description = Some(spec.description.trim().to_owned());
                    wf.updated_at = now.clone();
                    store::update_workflow_meta(&tx, &wf)?;
                }
                let text = format!(
                    "Built \u{201c}{}\u{201d}: {}",
                    spec.name.trim(),
                    spec.description.trim()
                );
                published.push(self.add_message(
                    &tx,
                    workflow_id,
                    version_id,
                    "assistant",
                    &text,
                    &now,
                )?);
                None
            }
            Err(e) => {
                let reason = e.to_string();
                version.failure_reason = Some(reason.clone());
                move_version(&tx, &mut version, VersionEvent::BuildFailed, &now)?;
                // Told in the chat too: with an approved version the view
                // shows that one, not the failed draft (#28).
                let text = super::outcomes::build_ended(version.version, &reason);
                published.push(self.add_notice(&tx, workflow_id, version_id, &text, &now)?);
                Some(reason)
            }
        };
        tx.commit()?;
        drop(db);
        self.publish_messages(workflow_id, published);
        self.publish_status(workflow_id, version_id, version.status, reason);
        self.write_session_state(workflow_id, version_id);
        Ok(())
    }
}

impl Service {
    /// Refuses a note that names someone of the files (#40 point 7): a
    /// note goes with every request of the workflow as the user's words,
    /// where the guard refuses an identifying value, so it would block
    /// them all; said at approval, the user can write it another way.
    fn notes_name_no_one(&self, request: &CreateWorkflow) -> Result<()> {
        if request.notes.is_empty() {
            return Ok(());
        }
        let mut files = Vec::new();
        for id in &request.file_ids {
            if let Some(f) = store::get_file(&self.db(), id)? {
                files.push((f.path, f.filename));
            }
        }
        let mut index = maskflow_privacy::guard::GuardIndex::new();
        for (path, name) in &files {
            index.add_file(std::path::Path::new(path), name, self.max_file_bytes());
        }
        for n in &request.notes {
            let words = maskflow_llm::LlmRequest {
                role: maskflow_llm::Role::Validator,
                messages: vec![maskflow_llm::ChatMessage::from_parts(
                    maskflow_llm::ChatRole::User,
                    vec![maskflow_llm::Part::user_words(n.text.as_str())],
                )],
                schema: None,
            };
            let refused = index.judge_request(&words, &[]).refused;
            if !refused.is_empty() {
                let named: Vec<String> = refused
                    .iter()
                    .map(|m| format!("{} (from {})", m.masked, m.source))
                    .collect();
                return Err(CoreError::InvalidRequest(format!(
                    "notes: a note names someone or a record of your files: {}. A note is sent \
                     to the AI as you write it, with every request; write it without the value \
                     (\"the test account in row 12\", \"customers whose id starts with T\")",
                    named.join(", ")
                )));
            }
        }
        Ok(())
    }
}

/// The extracts a new workflow starts from, as they will be sent: the stored
/// ones of `file_ids` (names that are values masked unless sent as they are,
/// the category columns switched on added), or the client's own when it gave
/// no files, checked to hold only masked samples.
fn approved_extracts(
    tx: &rusqlite::Transaction<'_>,
    request: &CreateWorkflow,
) -> Result<Vec<Value>> {
    let named = request
        .show_categories
        .iter()
        .map(|c| ("show_categories", &c.file_id))
        .chain(request.notes.iter().map(|n| ("notes", &n.file_id)));
    for (field, file_id) in named {
        if !request.file_ids.contains(file_id) {
            return Err(CoreError::InvalidRequest(format!(
                "{field}: file {file_id} is not among file_ids"
            )));
        }
    }
    let mut stored = Vec::new();
    // The same, without the categories switched on: a client may send the
    // extracts as uploaded, or as they will be sent.
    let mut uploaded = Vec::new();
    let mut left_off = Vec::new();
    for id in &request.file_ids {
        let file = store::get_file(tx, id)?.ok_or_else(|| {
            CoreError::InvalidRequest(format!("file_ids: file {id} was not uploaded"))
        })?;
        // The names as sent: value-like ones masked unless the user
        // chose to send them as they are (#26).
        let mut sent = crate::names::outbound(&file.extract, &request.send_as_is).extract;
        // The category columns the user switched on, and only those (#28).
        let chosen: Vec<crate::categories::Chosen<'_>> = request
            .show_categories
            .iter()
            .filter(|c| &c.file_id == id)
            .map(|c| (c.sheet.as_deref(), c.column.as_str()))
            .collect();
        let candidates = store::file_categories::of_file(tx, id)?;
        uploaded.push(sent.clone());
        if !chosen.is_empty() {
            crate::categories::show(&mut sent, &file.extract, id, &candidates, &chosen)
                .map_err(CoreError::InvalidRequest)?;
        }
        stored.push(sent);
        left_off.push((candidates, chosen));
    }
    let given: Vec<Value> = request
        .file_extracts
        .iter()
        .map(|e| serde_json::to_value(&e.0))
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| CoreError::InvalidRequest(format!("file_extracts: {e}")))?;
    // The client's extracts are never trusted (#13): with files, the stored
    // ones are used; alone, they must hold only masked samples.
    let extracts: Vec<Value> = if !request.file_ids.is_empty() {
        if !given.is_empty() {
            maskflow_privacy::extracts::check_against_stored(&stored, &given)
                .or_else(|e| {
                    maskflow_privacy::extracts::check_against_stored(&uploaded, &given)
                        .map_err(|_| e)
                })
                .map_err(CoreError::InvalidRequest)?;
        }
        stored
    } else {
        for e in &given {
            maskflow_privacy::extracts::check_masked(e).map_err(CoreError::InvalidRequest)?;
        }
        given
            .iter()
            .map(|e| crate::names::outbound(e, &request.send_as_is).extract)
            .collect()
    };
    if extracts.is_empty() {
        return Err(CoreError::InvalidRequest(
            "file_extracts must list at least one approved extract (or give file_ids)".into(),
        ));
    }
    let mut extracts = extracts;
    // What only Maskflow adds, once the client's extracts are checked
    // against the stored ones: the category columns left off, named with
    // their number of values (#40 point 5), and the user's notes beside
    // their tables (point 7).
    for (sent, (candidates, chosen)) in extracts.iter_mut().zip(&left_off) {
        crate::categories::offer(sent, candidates, chosen);
    }
    for (id, sent) in request.file_ids.iter().zip(extracts.iter_mut()) {
        let notes: Vec<crate::data_notes::Note<'_>> = request
            .notes
            .iter()
            .filter(|n| &n.file_id == id)
            .map(|n| crate::data_notes::Note {
                sheet: n.sheet.as_deref(),
                column: n.column.as_deref(),
                text: &n.text,
            })
            .collect();
        if !notes.is_empty() {
            crate::data_notes::attach(sent, &notes)
                .map_err(|e| CoreError::InvalidRequest(format!("{e} (file {id})")))?;
        }
    }
    if !request.file_ids.is_empty() {
        // How much of each id column is found in the other files (#40).
        let mut paths = Vec::new();
        for id in &request.file_ids {
            if let Some(f) = store::get_file(tx, id)? {
                paths.push(std::path::PathBuf::from(f.path));
            }
        }
        let paths: Vec<&std::path::Path> = paths.iter().map(|p| p.as_path()).collect();
        super::join_overlap::annotate(&mut extracts, &paths);
    }
    Ok(extracts)
}
