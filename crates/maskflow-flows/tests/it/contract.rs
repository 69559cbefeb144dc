//! The checkpoint-store contract, passed by the flows' own database.

use maskflow_flows::testing::{LocalStorage, checkpoint_contract};

#[test]
fn the_local_storage_passes_the_checkpoint_contract() {
    let home = tempfile::tempdir().expect("tempdir");
    checkpoint_contract(&LocalStorage, home.path());
}

/// The contract can fail: a store that loses its writes (a fresh database
/// each time it is opened) breaks it.
#[test]
#[should_panic(expected = "get: the run is there")]
fn a_store_that_forgets_fails_the_checkpoint_contract() {
    #[derive(Debug)]
    struct Forgetful(tempfile::TempDir);
    impl maskflow_flows::FlowStorage for Forgetful {
        fn open(
            &self,
            _home: &std::path::Path,
            stamp: &str,
        ) -> maskflow_flows::error::Result<rusqlite::Connection> {
            // Each open gets a folder of its own: nothing written is seen again.
            let dir = self.0.path().join(format!("{stamp}-{}", next_folder()));
            LocalStorage.open(&dir, stamp)
        }
        fn backup_before_run(
            &self,
            _conn: &rusqlite::Connection,
            _home: &std::path::Path,
            _run_id: &str,
            _now: &str,
        ) -> maskflow_flows::error::Result<()> {
            Ok(())
        }
        fn lease_ttl_ms(&self) -> i64 {
            LocalStorage.lease_ttl_ms()
        }
        fn acquire_lease(
            &self,
            conn: &rusqlite::Connection,
            resource: &str,
            now_ms: i64,
        ) -> maskflow_flows::error::Result<()> {
            LocalStorage.acquire_lease(conn, resource, now_ms)
        }
        fn renew_lease(
            &self,
            conn: &rusqlite::Connection,
            resource: &str,
            now_ms: i64,
        ) -> maskflow_flows::error::Result<()> {
            LocalStorage.renew_lease(conn, resource, now_ms)
        }
        fn release_lease(
            &self,
            conn: &rusqlite::Connection,
            resource: &str,
        ) -> maskflow_flows::error::Result<()> {
            LocalStorage.release_lease(conn, resource)
        }
        fn account(&self) -> &str {
            "local"
        }
    }
    fn next_folder() -> u64 {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        N.fetch_add(1, Ordering::SeqCst)
    }
    let home = tempfile::tempdir().expect("tempdir");
    checkpoint_contract(
        &Forgetful(tempfile::tempdir().expect("tempdir")),
        home.path(),
    );
}
