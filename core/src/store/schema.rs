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

/// Migration 4 (reserved for flows; 2 and 3 belong to other branches and are
/// ordered before it when merged): flow runs with their definition and state,
/// versioned checkpoints with a monotonic id, transcript turns and the
/// messages of each agent conversation. See [`crate::flows::store`].
pub const V4: &str = crate::flows::store::MIGRATION;

/// Every migration, in order. `user_version` records how many have run.
pub fn migrations() -> Migrations<'static> {
    Migrations::new(all())
}

/// The migration list, for tests that append a migration of their own.
pub(crate) fn all() -> Vec<M<'static>> {
    vec![M::up(V1), M::up(V4)]
}
