//! How many checkpoints a flow run keeps (issue 18, point 7), a storage
//! setting like the upload expiry: stored in `settings`, read when the
//! service opens and handed to the running flow engine as soon as it changes.

use maskflow_flows::checkpoint::CheckpointPolicy;
use rusqlite::Connection;

use crate::error::{CoreError, Result};
use crate::store;

/// The settings key of the full snapshots a run in progress keeps.
const KEEP_KEY: &str = "checkpoint_keep_full_snapshots";
/// The settings key of the most change-only checkpoints between two full ones.
const FULL_EVERY_KEY: &str = "checkpoint_full_every";
/// The most full snapshots the setting accepts.
pub const MAX_KEEP_FULL_SNAPSHOTS: u32 = 1_000;
/// The most change-only checkpoints between two full snapshots it accepts.
pub const MAX_FULL_EVERY: u32 = 10_000;

/// The checkpoint policy stored in `conn` (the default for what is unset
/// or unreadable: a damaged value must not stop the service from opening).
pub fn stored_policy(conn: &Connection) -> CheckpointPolicy {
    let default = CheckpointPolicy::default();
    let read = |key: &str, max: u32, fallback: u32| {
        store::settings::get(conn, key)
            .ok()
            .flatten()
            .and_then(|v| v.trim().parse::<u32>().ok())
            .filter(|v| *v <= max)
            .unwrap_or(fallback)
    };
    CheckpointPolicy {
        full_every: read(FULL_EVERY_KEY, MAX_FULL_EVERY, default.full_every),
        keep_full_snapshots: read(
            KEEP_KEY,
            MAX_KEEP_FULL_SNAPSHOTS,
            default.keep_full_snapshots,
        ),
    }
}

/// `current` with the given changes (`None`: unchanged), or a plain
/// sentence naming the field out of range.
pub fn checked_policy(
    current: CheckpointPolicy,
    keep_full_snapshots: Option<u32>,
    full_every: Option<u32>,
) -> Result<CheckpointPolicy> {
    if let Some(keep) = keep_full_snapshots
        && keep > MAX_KEEP_FULL_SNAPSHOTS
    {
        return Err(CoreError::InvalidRequest(format!(
            "checkpoint_keep_full_snapshots must be between 0 (keep every checkpoint) \
             and {MAX_KEEP_FULL_SNAPSHOTS}, not {keep}"
        )));
    }
    if let Some(every) = full_every
        && every > MAX_FULL_EVERY
    {
        return Err(CoreError::InvalidRequest(format!(
            "checkpoint_full_every must be between 0 (every checkpoint is a full \
             snapshot) and {MAX_FULL_EVERY}, not {every}"
        )));
    }
    Ok(CheckpointPolicy {
        full_every: full_every.unwrap_or(current.full_every),
        keep_full_snapshots: keep_full_snapshots.unwrap_or(current.keep_full_snapshots),
    })
}

/// Stores `policy` (the caller hands it to the engine).
pub fn store_policy(conn: &Connection, policy: CheckpointPolicy, now: &str) -> Result<()> {
    store::settings::put(conn, FULL_EVERY_KEY, &policy.full_every.to_string(), now)?;
    store::settings::put(conn, KEEP_KEY, &policy.keep_full_snapshots.to_string(), now)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_is_checked_stored_and_read_back() {
        let conn = store::open_in_memory().expect("db");
        let default = CheckpointPolicy::default();
        assert_eq!(stored_policy(&conn), default, "unset: the default");

        let set = checked_policy(default, Some(3), Some(5)).expect("in range");
        assert_eq!(
            set,
            CheckpointPolicy {
                full_every: 5,
                keep_full_snapshots: 3
            }
        );
        store_policy(&conn, set, "2026-01-01T00:00:00Z").expect("store");
        assert_eq!(stored_policy(&conn), set);

        // Absent fields stay as they were; the bounds are accepted.
        let kept = checked_policy(set, None, Some(0)).expect("0 is allowed");
        assert_eq!((kept.keep_full_snapshots, kept.full_every), (3, 0));
        let edge = checked_policy(set, Some(MAX_KEEP_FULL_SNAPSHOTS), Some(MAX_FULL_EVERY));
        assert!(edge.is_ok(), "{edge:?}");
        assert_eq!(
            checked_policy(set, Some(0), None)
                .expect("0")
                .keep_full_snapshots,
            0
        );
    }

    #[test]
    fn a_value_out_of_range_names_the_field_and_the_range() {
        let default = CheckpointPolicy::default();
        let keep =
            checked_policy(default, Some(MAX_KEEP_FULL_SNAPSHOTS + 1), None).expect_err("too many");
        let text = keep.to_string();
        assert!(matches!(keep, CoreError::InvalidRequest(_)), "{text}");
        assert!(
            text.contains("checkpoint_keep_full_snapshots")
                && text.contains("1001")
                && text.contains("1000"),
            "{text}"
        );
        let every = checked_policy(default, None, Some(u32::MAX)).expect_err("too large");
        let text = every.to_string();
        assert!(
            text.contains("checkpoint_full_every") && text.contains("10000"),
            "{text}"
        );
    }

    #[test]
    fn a_damaged_stored_value_falls_back_to_the_default() {
        let conn = store::open_in_memory().expect("db");
        let now = "2026-01-01T00:00:00Z";
        store::settings::put(&conn, KEEP_KEY, "\"lots\"", now).expect("put");
        store::settings::put(&conn, FULL_EVERY_KEY, "99999999", now).expect("put");
        assert_eq!(stored_policy(&conn), CheckpointPolicy::default());
    }
}
