//! The numbered, forward-only migrations of Maskflow's database. Append a new
//! `M::up` to add a migration; never edit one that has shipped.

use rusqlite_migration::{M, Migrations};

/// Migration 1: seed 000's data model, input files and settings.
///
/// `account_id`/`user_id` hold the local user so a shared, multi-user store
/// stays possible. The constraints of the seed are enforced here, by SQLite:
/// one active version per workflow, one draft per workflow, and only an
/// approved version can be active.
pub const V1: &str = r#"
CREATE TABLE settings (
    key         TEXT PRIMARY KEY NOT NULL,
    value       TEXT NOT NULL CHECK (json_valid(value)),
    updated_at  TEXT NOT NULL
) STRICT;

CREATE TABLE workflows (
    id          TEXT PRIMARY KEY NOT NULL CHECK (id LIKE 'wf\_%' ESCAPE '\'),
    account_id  TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    name        TEXT,
    description TEXT,
    label       TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
) STRICT;

CREATE TABLE workflow_versions (
    id               TEXT PRIMARY KEY NOT NULL CHECK (id LIKE 'wv\_%' ESCAPE '\'),
    workflow_id      TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    account_id       TEXT NOT NULL,
    version          INTEGER NOT NULL CHECK (version >= 1),
    status           TEXT NOT NULL CHECK (status IN ('validating', 'validated', 'clarifying',
                         'building', 'pending_user_approval', 'approved', 'rejected', 'failed',
                         'archived')),
    is_active        INTEGER NOT NULL DEFAULT 0 CHECK (is_active IN (0, 1)),
    file_extracts    TEXT NOT NULL CHECK (json_valid(file_extracts) AND json_type(file_extracts) = 'array'),
    fields           TEXT CHECK (fields IS NULL OR (json_valid(fields) AND json_type(fields) = 'array')),
    execution        TEXT CHECK (execution IS NULL OR (json_valid(execution) AND json_type(execution) = 'object')),
    script           TEXT,
    rejection_reason TEXT,
    failure_reason   TEXT,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL,
    UNIQUE (workflow_id, version),
    CHECK (is_active = 0 OR status = 'approved'),
    CHECK (rejection_reason IS NULL OR status IN ('rejected', 'archived')),
    CHECK (status <> 'rejected' OR rejection_reason IS NOT NULL)
) STRICT;

-- Only one version per workflow can have is_active = true (seed 000).
CREATE UNIQUE INDEX workflow_versions_one_active
    ON workflow_versions (workflow_id) WHERE is_active = 1;
-- At most one draft (a version still being worked on) per workflow.
CREATE UNIQUE INDEX workflow_versions_one_draft
    ON workflow_versions (workflow_id)
    WHERE status IN ('validating', 'validated', 'clarifying', 'building', 'pending_user_approval');
CREATE INDEX workflow_versions_by_status ON workflow_versions (status);

CREATE TABLE workflow_messages (
    id          TEXT PRIMARY KEY NOT NULL CHECK (id LIKE 'msg\_%' ESCAPE '\'),
    workflow_id TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    account_id  TEXT NOT NULL,
    version_id  TEXT REFERENCES workflow_versions(id) ON DELETE SET NULL,
    role        TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content     TEXT NOT NULL,
    created_at  TEXT NOT NULL
) STRICT;
CREATE INDEX workflow_messages_by_workflow ON workflow_messages (workflow_id, id);

-- The local files behind extracts. Paths never leave the machine.
CREATE TABLE input_files (
    id          TEXT PRIMARY KEY NOT NULL CHECK (id LIKE 'file\_%' ESCAPE '\'),
    account_id  TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    filename    TEXT NOT NULL,
    path        TEXT NOT NULL,
    size_bytes  INTEGER NOT NULL CHECK (size_bytes >= 0),
    extract     TEXT NOT NULL CHECK (json_valid(extract) AND json_type(extract) = 'object'),
    created_at  TEXT NOT NULL
) STRICT;

CREATE TABLE workflow_version_files (
    version_id  TEXT NOT NULL REFERENCES workflow_versions(id) ON DELETE CASCADE,
    file_id     TEXT NOT NULL REFERENCES input_files(id) ON DELETE RESTRICT,
    position    INTEGER NOT NULL CHECK (position >= 0),
    PRIMARY KEY (version_id, file_id)
) STRICT;
"#;

/// Migration 2: the egress ledger (`llm_calls`) and the texts a user
/// confirmed may be sent despite the privacy guard. Ledger rows keep no
/// foreign key: they outlive a deleted workflow (what left the machine stays
/// on record).
pub const V2: &str = r#"
CREATE TABLE llm_calls (
    id            TEXT PRIMARY KEY NOT NULL CHECK (id LIKE 'call\_%' ESCAPE '\'),
    created_at    TEXT NOT NULL,
    role          TEXT NOT NULL,
    provider      TEXT NOT NULL,
    model         TEXT NOT NULL,
    workflow_id   TEXT,
    url           TEXT,
    request_body  TEXT NOT NULL,
    reply         TEXT,
    input_tokens  INTEGER CHECK (input_tokens IS NULL OR input_tokens >= 0),
    output_tokens INTEGER CHECK (output_tokens IS NULL OR output_tokens >= 0),
    latency_ms    INTEGER NOT NULL CHECK (latency_ms >= 0),
    outcome       TEXT NOT NULL CHECK (outcome IN ('ok', 'error', 'blocked', 'cancelled')),
    blocked       INTEGER NOT NULL CHECK (blocked IN (0, 1)),
    error         TEXT,
    CHECK (blocked = 0 OR (outcome = 'blocked' AND request_body = ''))
) STRICT;
CREATE INDEX llm_calls_by_workflow ON llm_calls (workflow_id, id);

CREATE TABLE privacy_confirmations (
    workflow_id TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    content     TEXT NOT NULL,
    created_at  TEXT NOT NULL
) STRICT;
CREATE INDEX privacy_confirmations_by_workflow ON privacy_confirmations (workflow_id);
"#;

/// Migration 3 (reserved for the build pipeline): the state of each
/// version's build (phase, stage, iteration, pending gate, test report) and
/// the runs of approved workflows.
pub const V3: &str = r#"
CREATE TABLE version_builds (
    version_id   TEXT PRIMARY KEY NOT NULL REFERENCES workflow_versions(id) ON DELETE CASCADE,
    phase        TEXT NOT NULL CHECK (phase IN ('init', 'generate', 'review', 'revise', 'complete', 'failed')),
    stage        TEXT CHECK (stage IS NULL OR stage IN ('prompt', 'response')),
    iteration    INTEGER NOT NULL CHECK (iteration >= 0),
    pending_gate INTEGER NOT NULL DEFAULT 0 CHECK (pending_gate IN (0, 1)),
    state        TEXT NOT NULL CHECK (json_valid(state) AND json_type(state) = 'object'),
    test_report  TEXT CHECK (test_report IS NULL OR json_valid(test_report)),
    updated_at   TEXT NOT NULL
) STRICT;

CREATE TABLE workflow_runs (
    id           TEXT PRIMARY KEY NOT NULL CHECK (id LIKE 'run\_%' ESCAPE '\'),
    workflow_id  TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    version_id   TEXT NOT NULL REFERENCES workflow_versions(id) ON DELETE CASCADE,
    account_id   TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'timed_out',
                     'cancelled', 'memory_limit', 'cpu_limit', 'output_limit', 'process_limit',
                     'missing_packages', 'error')),
    inputs       TEXT NOT NULL CHECK (json_valid(inputs) AND json_type(inputs) = 'object'),
    outputs      TEXT NOT NULL CHECK (json_valid(outputs) AND json_type(outputs) = 'array'),
    result       TEXT CHECK (result IS NULL OR json_valid(result)),
    workdir      TEXT NOT NULL,
    started_at   TEXT NOT NULL,
    finished_at  TEXT,
    duration_ms  INTEGER CHECK (duration_ms IS NULL OR duration_ms >= 0)
) STRICT;
CREATE INDEX workflow_runs_by_workflow ON workflow_runs (workflow_id, id);
"#;

/// Migration 4 (reserved for flows; 2 and 3 belong to other branches and are
/// ordered before it when merged): flow runs with their definition and state,
/// versioned checkpoints with a monotonic id, transcript turns and the
/// messages of each agent conversation. See [`maskflow_flows::store`].
pub const V4: &str = maskflow_flows::store::MIGRATION;

/// V5 (issue #13): the ledger is written ahead. See
/// [`crate::store::llm_calls::WRITE_AHEAD_MIGRATION`].
pub const LEDGER_WRITE_AHEAD: &str = crate::store::llm_calls::WRITE_AHEAD_MIGRATION;

/// V6 (issue #19): leases — which process runs a flow run, a build or
/// a workflow run. See [`crate::store::leases`].
pub const LEASES: &str = crate::store::leases::MIGRATION;

/// Migration (issue 18, branch seeds18 — the lead renumbers on merge):
/// where each version came from. `origin` is `created` (a new workflow),
/// `edited` (Edit on `origin_version_id`) or `restored` (Restore of the
/// earlier `origin_version_id`). Older rows are filled in: version 1 was
/// created, later ones edited (from which one was not recorded).
pub const VERSION_ORIGIN: &str = r#"
ALTER TABLE workflow_versions ADD COLUMN origin TEXT
    CHECK (origin IS NULL OR origin IN ('created', 'edited', 'restored'));
ALTER TABLE workflow_versions ADD COLUMN origin_version_id TEXT;
UPDATE workflow_versions SET origin = CASE WHEN version = 1 THEN 'created' ELSE 'edited' END;
"#;

/// Migration (issue 18, branch seeds18): the privacy ledger outlives a
/// deleted workflow. See
/// [`crate::store::llm_calls::DELETED_WORKFLOW_MIGRATION`].
pub const LEDGER_DELETED_WORKFLOW: &str = crate::store::llm_calls::DELETED_WORKFLOW_MIGRATION;

/// Migration (issue 18, branch seeds18): the record of database backups.
/// See [`crate::store::backups`].
pub const DATABASE_BACKUPS: &str = crate::store::backups::MIGRATION;
/// V7 (issue #16, "python locks"; renumber when merged beside another V7):
/// the pinned Python package set of each version. See
/// [`crate::store::python_locks`].
pub const PYTHON_LOCKS: &str = crate::store::python_locks::MIGRATION;
/// Migration (issue 19, "restart-safe waiting"; renumber when merged beside
/// another): the manual back end's prompts outlive a restart. See
/// [`crate::store::manual_prompts`].
pub const MANUAL_PROMPTS: &str = crate::store::manual_prompts::MIGRATION;

/// Migration (issue 19, restart-safe build phases; renumber when merged
/// beside another): the call a manual prompt answers. See
/// [`crate::store::manual_prompts::CALL_MIGRATION`].
pub const MANUAL_PROMPT_CALLS: &str = crate::store::manual_prompts::CALL_MIGRATION;

/// Migration (issue 18 point 7, branch wt-checkpoints — the lead renumbers
/// on merge): a flow checkpoint may hold a delta. See
/// [`maskflow_flows::store::DELTA_MIGRATION`].
pub const FLOW_CHECKPOINT_DELTAS: &str = maskflow_flows::store::DELTA_MIGRATION;

/// Migration (issue 26, branch wt-flows — the lead renumbers on merge): a
/// flow agent's ledger row names its run and step. See
/// [`crate::store::llm_calls::FLOW_STEP_MIGRATION`].
pub const LEDGER_FLOW_STEP: &str = crate::store::llm_calls::FLOW_STEP_MIGRATION;
/// Issue 32: calls to the embedded model are marked local in the ledger.
pub const LEDGER_LOCAL: &str = crate::store::llm_calls::LOCAL_MIGRATION;

/// Migration (issue 28): the category columns of each uploaded file, local
/// only. See [`crate::store::file_categories`].
pub const FILE_CATEGORIES: &str = crate::store::file_categories::MIGRATION;

/// Migration (issue 28 point 4): a conversation holds Maskflow's own
/// `notice`s beside the user's and the assistant's messages — how a build or a message ended (failed,
/// cancelled, waiting), stored so the chat tells it after a reload. Notices
/// are never part of an LLM's history. SQLite cannot change a CHECK, so the
/// table is rebuilt with its rows.
pub const MESSAGE_NOTICES: &str = r#"
CREATE TABLE workflow_messages_new (
    id          TEXT PRIMARY KEY NOT NULL CHECK (id LIKE 'msg\_%' ESCAPE '\'),
    workflow_id TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    account_id  TEXT NOT NULL,
    version_id  TEXT REFERENCES workflow_versions(id) ON DELETE SET NULL,
    role        TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'notice')),
    content     TEXT NOT NULL,
    created_at  TEXT NOT NULL
) STRICT;
INSERT INTO workflow_messages_new (id, workflow_id, account_id, version_id, role, content, created_at)
    SELECT id, workflow_id, account_id, version_id, role, content, created_at FROM workflow_messages;
DROP TABLE workflow_messages;
ALTER TABLE workflow_messages_new RENAME TO workflow_messages;
CREATE INDEX workflow_messages_by_workflow ON workflow_messages (workflow_id, id);
"#;

/// Migration: the files outside clients (MCP) asked to see, waiting for
/// the user's approval; see [`crate::store::client_requests::MIGRATION`].
pub const CLIENT_REQUESTS: &str = crate::store::client_requests::MIGRATION;
/// Migration (issue 31 point 4): the SHA-256 of each input file of an
/// approved version, taken when it was approved, so a later run (or the
/// user) can tell whether the files are still the ones it was built on.
pub const VERSION_INPUT_HASHES: &str = r#"
CREATE TABLE version_input_hashes (
    version_id TEXT NOT NULL REFERENCES workflow_versions(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    filename TEXT NOT NULL,
    sha256 TEXT,
    PRIMARY KEY (version_id, position)
);
"#;

/// Migration (issue 41 point 3): a run whose script succeeded but whose
/// output jumped from the approved run's is held as `needs_look`. SQLite
/// cannot change a CHECK, so the table is rebuilt with its rows (no table
/// refers to it).
pub const RUN_NEEDS_LOOK: &str = r#"
CREATE TABLE workflow_runs_new (
    id           TEXT PRIMARY KEY NOT NULL CHECK (id LIKE 'run\_%' ESCAPE '\'),
    workflow_id  TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    version_id   TEXT NOT NULL REFERENCES workflow_versions(id) ON DELETE CASCADE,
    account_id   TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'needs_look', 'failed',
                     'timed_out', 'cancelled', 'memory_limit', 'cpu_limit', 'output_limit',
                     'process_limit', 'missing_packages', 'error')),
    inputs       TEXT NOT NULL CHECK (json_valid(inputs) AND json_type(inputs) = 'object'),
    outputs      TEXT NOT NULL CHECK (json_valid(outputs) AND json_type(outputs) = 'array'),
    result       TEXT CHECK (result IS NULL OR json_valid(result)),
    workdir      TEXT NOT NULL,
    started_at   TEXT NOT NULL,
    finished_at  TEXT,
    duration_ms  INTEGER CHECK (duration_ms IS NULL OR duration_ms >= 0)
) STRICT;
INSERT INTO workflow_runs_new (id, workflow_id, version_id, account_id, status, inputs, outputs,
                               result, workdir, started_at, finished_at, duration_ms)
    SELECT id, workflow_id, version_id, account_id, status, inputs, outputs,
           result, workdir, started_at, finished_at, duration_ms FROM workflow_runs;
DROP TABLE workflow_runs;
ALTER TABLE workflow_runs_new RENAME TO workflow_runs;
CREATE INDEX workflow_runs_by_workflow ON workflow_runs (workflow_id, id);
"#;

/// Every migration, in order. `user_version` records how many have run.
pub fn migrations() -> Migrations<'static> {
    Migrations::new(all())
}

/// The migration list, for tests that append a migration of their own.
pub(crate) fn all() -> Vec<M<'static>> {
    vec![
        M::up(V1),
        M::up(V2),
        M::up(V3),
        M::up(V4),
        M::up(LEDGER_WRITE_AHEAD),
        M::up(LEASES),
        M::up(VERSION_ORIGIN),
        M::up(LEDGER_DELETED_WORKFLOW),
        M::up(DATABASE_BACKUPS),
        M::up(PYTHON_LOCKS),
        M::up(MANUAL_PROMPTS),
        M::up(FLOW_CHECKPOINT_DELTAS),
        M::up(MANUAL_PROMPT_CALLS),
        M::up(LEDGER_FLOW_STEP),
        M::up(FILE_CATEGORIES),
        M::up(MESSAGE_NOTICES),
        M::up(CLIENT_REQUESTS),
        M::up(VERSION_INPUT_HASHES),
        M::up(super::schedules::MIGRATION),
        M::up(LEDGER_LOCAL),
        M::up(crate::store::llm_calls::NOTE_MIGRATION),
        M::up(RUN_NEEDS_LOOK),
        M::up(super::schedules::LAST_SUCCESS_MIGRATION),
    ]
}
