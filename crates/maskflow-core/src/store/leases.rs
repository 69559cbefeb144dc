//! Leases: which Maskflow process is running a piece of work (a flow run, a
//! build, a workflow run), held as a row in the shared SQLite file so that
//! two processes on one data folder never run the same thing at once.
//!
//! A lease names its owner (pid and a per-process id, since pids are reused)
//! and expires unless the owner renews it with a heartbeat; a lease whose
//! owner died (kill -9) simply runs out and the work can be taken again.
//! Every change is one SQL statement, so SQLite's write lock makes taking a
//! lease atomic across processes.

use rusqlite::{Connection, OptionalExtension, params};

use crate::error::{CoreError, Result};

/// Migration: the `leases` table (appended to the schema's list).
pub const MIGRATION: &str = r#"
CREATE TABLE leases (
    resource      TEXT PRIMARY KEY NOT NULL CHECK (length(resource) > 0),
    owner_pid     INTEGER NOT NULL CHECK (owner_pid >= 0),
    owner_id      TEXT NOT NULL CHECK (length(owner_id) > 0),
    acquired_ms   INTEGER NOT NULL,
    heartbeat_ms  INTEGER NOT NULL,
    expires_ms    INTEGER NOT NULL CHECK (expires_ms >= heartbeat_ms)
) STRICT;
"#;

/// How long a lease lives without a heartbeat.
pub const DEFAULT_TTL_MS: i64 = 30_000;

/// Who holds (or asks for) a lease: a process id and an id unique to the
/// process's lifetime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseOwner {
    /// The operating system's process id (shown to people).
    pub pid: u32,
    /// A per-process id, so a reused pid is never mistaken for the owner.
    pub id: String,
}

impl LeaseOwner {
    /// A new owner in this process: its pid and a fresh id. Each service
    /// makes one when it opens, so two services in one process (tests, a
    /// reopened data folder) never take each other's leases for their own.
    pub fn new_in_this_process() -> LeaseOwner {
        let pid = std::process::id();
        LeaseOwner {
            pid,
            // A reused pid, or a second service of this process, gets a new id.
            id: format!("proc_{pid}_{}", maskflow_clock::random_token()),
        }
    }
}

/// A lease as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// What is leased, e.g. `flow_run:fr_…`.
    pub resource: String,
    /// The owner's pid.
    pub owner_pid: u32,
    /// The owner's per-process id.
    pub owner_id: String,
    /// When the lease was taken (Unix ms).
    pub acquired_ms: i64,
    /// The last heartbeat (Unix ms).
    pub heartbeat_ms: i64,
    /// When the lease runs out without a heartbeat (Unix ms).
    pub expires_ms: i64,
}

/// Takes the lease on `resource` for `owner` until `now_ms + ttl_ms`. Succeeds
/// when the resource is free, its lease has expired, or `owner` already holds
/// it (then it is renewed). Otherwise a `Conflict` naming the holder's pid.
pub fn acquire(
    conn: &Connection,
    resource: &str,
    owner: &LeaseOwner,
    now_ms: i64,
    ttl_ms: i64,
) -> Result<Lease> {
    if resource.is_empty() || ttl_ms <= 0 {
        return Err(CoreError::InvalidRequest(format!(
            "a lease needs a resource name and a positive lifetime (got {resource:?}, {ttl_ms} ms)"
        )));
    }
    let changed = conn.execute(
        "INSERT INTO leases (resource, owner_pid, owner_id, acquired_ms, heartbeat_ms, expires_ms)
         VALUES (?1, ?2, ?3, ?4, ?4, ?5)
         ON CONFLICT (resource) DO UPDATE SET
             owner_pid = excluded.owner_pid,
             owner_id = excluded.owner_id,
             acquired_ms = CASE WHEN leases.owner_id = excluded.owner_id
                                THEN leases.acquired_ms ELSE excluded.acquired_ms END,
             heartbeat_ms = excluded.heartbeat_ms,
             expires_ms = excluded.expires_ms
         WHERE leases.owner_id = excluded.owner_id OR leases.expires_ms <= excluded.heartbeat_ms",
        params![resource, owner.pid, owner.id, now_ms, now_ms + ttl_ms],
    )?;
    let lease = get(conn, resource)?.ok_or_else(|| {
        CoreError::Conflict(format!(
            "the lease on {resource} vanished while it was taken"
        ))
    })?;
    if changed == 0 || lease.owner_id != owner.id {
        // The holder's process is gone (killed, crashed): its lease is dead
        // now, not only at expiry. A reused pid looks alive, so that case
        // safely falls back to waiting for the expiry.
        if lease.owner_pid != owner.pid && !pid_alive(lease.owner_pid) {
            let taken = conn.execute(
                "UPDATE leases SET owner_pid = ?3, owner_id = ?4, acquired_ms = ?5,
                     heartbeat_ms = ?5, expires_ms = ?6
                 WHERE resource = ?1 AND owner_id = ?2",
                params![
                    resource,
                    lease.owner_id,
                    owner.pid,
                    owner.id,
                    now_ms,
                    now_ms + ttl_ms
                ],
            )?;
            if taken == 1
                && let Some(l) = get(conn, resource)?
            {
                return Ok(l);
            }
        }
        return Err(held_error(&lease, now_ms));
    }
    Ok(lease)
}

/// Whether a process with this pid is alive on this machine. Where that
/// cannot be told (no `/proc`), it counts as alive and the lease's expiry
/// decides.
pub(crate) fn pid_alive(pid: u32) -> bool {
    let proc = std::path::Path::new("/proc");
    if !proc.join("self").exists() {
        return true;
    }
    match std::fs::read_to_string(proc.join(pid.to_string()).join("stat")) {
        // A killed process not yet reaped by its parent is a zombie ("Z").
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_none_or(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// Renews `owner`'s lease on `resource` until `now_ms + ttl_ms`. `Ok(false)`
/// when the lease is no longer `owner`'s (it expired and another took it, or
/// it was released): the caller must stop the work.
pub fn heartbeat(
    conn: &Connection,
    resource: &str,
    owner: &LeaseOwner,
    now_ms: i64,
    ttl_ms: i64,
) -> Result<bool> {
    let changed = conn.execute(
        "UPDATE leases SET heartbeat_ms = ?3, expires_ms = ?4
         WHERE resource = ?1 AND owner_id = ?2",
        params![resource, owner.id, now_ms, now_ms + ttl_ms],
    )?;
    Ok(changed == 1)
}

/// Gives up `owner`'s lease on `resource` (a no-op if it is not `owner`'s).
pub fn release(conn: &Connection, resource: &str, owner: &LeaseOwner) -> Result<()> {
    conn.execute(
        "DELETE FROM leases WHERE resource = ?1 AND owner_id = ?2",
        params![resource, owner.id],
    )?;
    Ok(())
}

/// The live lease on `resource` at `now_ms`, if any (expired ones are none).
pub fn holder(conn: &Connection, resource: &str, now_ms: i64) -> Result<Option<Lease>> {
    Ok(get(conn, resource)?.filter(|l| l.expires_ms > now_ms))
}

/// The live lease of another process on `resource`, if any: unexpired and
/// its owner still running (a dead owner's lease no longer protects anything).
pub fn held_elsewhere(
    conn: &Connection,
    resource: &str,
    me: &LeaseOwner,
    now_ms: i64,
) -> Result<Option<Lease>> {
    Ok(holder(conn, resource, now_ms)?
        .filter(|l| l.owner_id != me.id && (l.owner_pid == me.pid || pid_alive(l.owner_pid))))
}

/// How many leases are live at `now_ms` (of any owner).
pub fn live_count(conn: &Connection, now_ms: i64) -> Result<i64> {
    Ok(conn.query_row(
        "SELECT count(*) FROM leases WHERE expires_ms > ?1",
        [now_ms],
        |r| r.get(0),
    )?)
}

fn get(conn: &Connection, resource: &str) -> Result<Option<Lease>> {
    Ok(conn
        .query_row(
            "SELECT resource, owner_pid, owner_id, acquired_ms, heartbeat_ms, expires_ms
             FROM leases WHERE resource = ?1",
            params![resource],
            |r| {
                Ok(Lease {
                    resource: r.get(0)?,
                    owner_pid: r.get(1)?,
                    owner_id: r.get(2)?,
                    acquired_ms: r.get(3)?,
                    heartbeat_ms: r.get(4)?,
                    expires_ms: r.get(5)?,
                })
            },
        )
        .optional()?)
}

fn held_error(lease: &Lease, now_ms: i64) -> CoreError {
    let secs = ((lease.expires_ms - now_ms).max(0) + 999) / 1000;
    CoreError::Conflict(format!(
        "{} is in progress in another Maskflow process (pid {}); wait for it to finish, \
         or if that process has stopped, its lease expires in {secs} s and the work can be resumed",
        lease.resource, lease.owner_pid
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Test owners carry pid 1 (init, always alive) so no holder is taken as
    /// dead; the per-process id tells them apart.
    fn owner(pid: u32, id: &str) -> LeaseOwner {
        LeaseOwner {
            pid,
            id: id.to_owned(),
        }
    }

    /// Two connections on one file stand in for two processes.
    fn two_connections() -> (tempfile::TempDir, Connection, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let a = crate::store::open(dir.path(), "t").unwrap();
        let b = crate::store::open(dir.path(), "t").unwrap();
        (dir, a, b)
    }

    #[test]
    fn a_second_owner_is_refused_with_the_holders_pid() {
        let (_d, a, b) = two_connections();
        let (p1, p2) = (owner(1, "one"), owner(1, "two"));
        acquire(&a, "flow_run:fr_1", &p1, 1_000, 30_000).unwrap();
        let err = acquire(&b, "flow_run:fr_1", &p2, 2_000, 30_000).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, CoreError::Conflict(_)));
        assert!(
            msg.contains("in progress in another Maskflow process (pid 1)"),
            "{msg}"
        );
        assert!(msg.contains("flow_run:fr_1"), "{msg}");
        // The holder is untouched, and other resources are free.
        assert_eq!(
            holder(&b, "flow_run:fr_1", 2_000)
                .unwrap()
                .unwrap()
                .owner_pid,
            1
        );
        acquire(&b, "flow_run:fr_2", &p2, 2_000, 30_000).unwrap();
    }

    #[test]
    fn the_owner_renews_and_a_lapsed_lease_is_taken_over() {
        let (_d, a, b) = two_connections();
        let (p1, p2) = (owner(1, "one"), owner(1, "two"));
        let first = acquire(&a, "build:wv_1", &p1, 1_000, 10_000).unwrap();
        // Re-acquiring by the owner renews and keeps the start time.
        let again = acquire(&a, "build:wv_1", &p1, 5_000, 10_000).unwrap();
        assert_eq!(again.acquired_ms, first.acquired_ms);
        assert_eq!(again.expires_ms, 15_000);
        assert!(heartbeat(&a, "build:wv_1", &p1, 14_000, 10_000).unwrap());
        assert!(acquire(&b, "build:wv_1", &p2, 23_999, 10_000).is_err());
        // The owner stops heartbeating (killed): at expiry the other takes it.
        let taken = acquire(&b, "build:wv_1", &p2, 24_000, 10_000).unwrap();
        assert_eq!((taken.owner_pid, taken.acquired_ms), (1, 24_000));
        // The old owner learns it lost the lease and cannot release the new one.
        assert!(!heartbeat(&a, "build:wv_1", &p1, 24_500, 10_000).unwrap());
        release(&a, "build:wv_1", &p1).unwrap();
        assert_eq!(
            holder(&a, "build:wv_1", 25_000).unwrap().unwrap().owner_id,
            "two"
        );
        release(&b, "build:wv_1", &p2).unwrap();
        assert!(holder(&a, "build:wv_1", 25_000).unwrap().is_none());
        acquire(&a, "build:wv_1", &p1, 25_000, 10_000).unwrap();
    }

    #[test]
    fn a_reused_pid_is_not_the_owner() {
        let (_d, a, b) = two_connections();
        acquire(&a, "workflow_run:wf_1", &owner(1, "old"), 0, 30_000).unwrap();
        let err = acquire(&b, "workflow_run:wf_1", &owner(1, "new"), 1, 30_000).unwrap_err();
        assert!(err.to_string().contains("pid 1"));
    }

    #[test]
    fn a_dead_owners_lease_is_taken_before_expiry() {
        let (_d, a, b) = two_connections();
        // A child that has exited and been reaped: its pid names no process.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let gone = LeaseOwner {
            pid: dead,
            id: "gone".into(),
        };
        acquire(&a, "flow_run:fr_9", &gone, 0, 60_000).unwrap();
        let taken = acquire(&b, "flow_run:fr_9", &owner(1, "me"), 1, 60_000).unwrap();
        assert_eq!(taken.owner_id, "me");
    }

    #[test]
    fn bad_requests_are_clear_errors() {
        let (_d, a, _b) = two_connections();
        let p = LeaseOwner::new_in_this_process();
        assert_eq!(p.pid, std::process::id());
        assert_eq!(p, p.clone());
        assert_ne!(
            p.id,
            LeaseOwner::new_in_this_process().id,
            "one id per owner"
        );
        assert!(matches!(
            acquire(&a, "", &p, 0, 1),
            Err(CoreError::InvalidRequest(_))
        ));
        assert!(matches!(
            acquire(&a, "x", &p, 0, 0),
            Err(CoreError::InvalidRequest(_))
        ));
    }
}
