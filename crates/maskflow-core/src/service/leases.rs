//! Leases held by the service (issue 19): a workflow handling a message, a
//! build and a workflow run each hold a row in the shared database while they
//! work, renewed by a heartbeat, so a second Maskflow process on the same
//! data folder is refused instead of working on the same thing — and does not
//! take a live build for one cut off by a crash.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use super::{Inner, Service};
use crate::error::Result;
use crate::store::leases::{self, DEFAULT_TTL_MS};

/// The lease of a workflow handling a message.
pub(super) fn workflow(id: &str) -> String {
    format!("workflow {id}")
}

/// The lease of a version's build.
pub(super) fn build(version_id: &str) -> String {
    format!("the build of version {version_id}")
}

/// The lease of a workflow run.
pub(super) fn run(run_id: &str) -> String {
    format!("workflow run {run_id}")
}

/// A lease this process holds; renewed until dropped, then released.
#[derive(Debug)]
pub(super) struct LeaseGuard {
    inner: Weak<Inner>,
    resource: String,
    stop: Arc<AtomicBool>,
}

impl Drop for LeaseGuard {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(inner) = self.inner.upgrade() {
            let service = Service { inner };
            let _ = leases::release(&service.db(), &self.resource, &service.inner.owner);
        }
    }
}

impl Service {
    fn now_ms(&self) -> i64 {
        i64::try_from(self.inner.clock.now_ms()).unwrap_or(i64::MAX)
    }

    /// Takes this process's lease on `resource` (a `Conflict` naming the
    /// other process's pid while it holds one) and renews it until the guard
    /// is dropped.
    pub(super) fn lease(&self, resource: String) -> Result<LeaseGuard> {
        let owner = self.inner.owner.clone();
        leases::acquire(&self.db(), &resource, &owner, self.now_ms(), DEFAULT_TTL_MS)?;
        let guard = LeaseGuard {
            inner: Arc::downgrade(&self.inner),
            resource: resource.clone(),
            stop: Arc::new(AtomicBool::new(false)),
        };
        let (inner, stop) = (guard.inner.clone(), guard.stop.clone());
        let _ = std::thread::Builder::new()
            .name("maskflow-lease".into())
            .spawn(move || {
                let every = Duration::from_millis(DEFAULT_TTL_MS as u64 / 3);
                let step = Duration::from_millis(250);
                let mut waited = Duration::ZERO;
                loop {
                    std::thread::sleep(step);
                    waited += step;
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    if waited < every {
                        continue;
                    }
                    waited = Duration::ZERO;
                    let Some(inner) = inner.upgrade() else { return };
                    let service = Service { inner };
                    let now = service.now_ms();
                    let _ =
                        leases::heartbeat(&service.db(), &resource, &owner, now, DEFAULT_TTL_MS);
                }
            });
        Ok(guard)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::tests::{create, service_with};
    use crate::store::builds::RunRow;
    use serde_json::json;

    /// Another live process (a `sleep`) holding `resource`, as a second
    /// Maskflow would.
    fn held_by(service: &Service, child: &std::process::Child, resource: &str) {
        let other = leases::LeaseOwner {
            pid: child.id(),
            id: "proc_other".into(),
        };
        leases::acquire(&service.db(), resource, &other, 0, i64::MAX / 2).expect("lease");
    }

    fn other_process() -> std::process::Child {
        std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .expect("sleep")
    }

    #[tokio::test]
    async fn a_workflow_busy_in_another_process_is_refused_until_that_process_dies() {
        let home = tempfile::tempdir().expect("tmp");
        let s = service_with(home.path(), Arc::new(maskflow_llm::Unconfigured));
        let c = create(&s);
        let mut other = other_process();
        held_by(&s, &other, &workflow(&c.workflow_id));
        let e = s
            .send_message(&c.workflow_id, "go")
            .await
            .expect_err("held");
        assert_eq!(e.code(), crate::ErrorCode::Conflict);
        let text = e.to_string();
        assert!(
            text.contains(&format!("another Maskflow process (pid {})", other.id())),
            "{text}"
        );
        assert!(
            s.get_workflow(&c.workflow_id)
                .expect("get")
                .messages
                .is_empty(),
            "nothing stored"
        );

        other.kill().expect("kill");
        other.wait().expect("reap");
        // The holder is gone: its lease no longer blocks (the message then
        // fails on the unconfigured back end, which is past the lease).
        let e = s
            .send_message(&c.workflow_id, "go")
            .await
            .expect_err("no back end");
        assert_ne!(e.code(), crate::ErrorCode::Conflict, "{e}");
    }

    #[test]
    fn a_start_up_leaves_a_live_process_s_build_and_run_alone_and_ends_a_dead_one_s() {
        let home = tempfile::tempdir().expect("tmp");
        let s = service_with(home.path(), Arc::new(maskflow_llm::Unconfigured));
        let c = create(&s);
        {
            let db = s.db();
            let mut v = crate::store::get_version(&db, &c.version_id)
                .expect("read")
                .expect("version");
            v.status = crate::Status::Building;
            crate::store::update_version(&db, &v).expect("building");
        }
        let run = RunRow {
            id: "run_01".into(),
            workflow_id: c.workflow_id.clone(),
            version_id: c.version_id.clone(),
            status: "running".into(),
            inputs: json!({}),
            outputs: json!([]),
            result: None,
            workdir: home.path().join("runs/run_01").display().to_string(),
            started_at: "2026-01-01T00:00:00Z".into(),
            finished_at: None,
            duration_ms: None,
        };
        crate::store::builds::put_run(&s.db(), &run).expect("run");
        let mut other = other_process();
        held_by(&s, &other, &build(&c.version_id));
        held_by(&s, &other, &self::run("run_01"));
        drop(s);

        // A second process starts while the first still works: nothing of
        // the first's is taken for cut off.
        let s = service_with(home.path(), Arc::new(maskflow_llm::Unconfigured));
        let w = s.get_workflow(&c.workflow_id).expect("get");
        assert_eq!(w.current_version.status, crate::Status::Building);
        let stored = |s: &Service| -> RunRow {
            crate::store::builds::get_run(&s.db(), "run_01")
                .expect("read")
                .expect("run")
        };
        let status = |s: &Service| -> String { stored(s).status };
        assert_eq!(status(&s), "running");
        drop(s);

        // The first process was killed: the next start-up ends both, saying why.
        other.kill().expect("kill");
        other.wait().expect("reap");
        let s = service_with(home.path(), Arc::new(maskflow_llm::Unconfigured));
        let w = s.get_workflow(&c.workflow_id).expect("get");
        assert_eq!(w.current_version.status, crate::Status::Failed);
        assert_eq!(status(&s), "error");
        let result = stored(&s).result.expect("result");
        let message = result["message"].as_str().expect("message");
        assert!(
            message.contains("Maskflow stopped while this run was in progress"),
            "{message}"
        );
    }

    #[test]
    fn a_lease_is_held_while_its_guard_lives() {
        let home = tempfile::tempdir().expect("tmp");
        let s = service_with(home.path(), Arc::new(maskflow_llm::Unconfigured));
        let guard = s.lease(run("run_x")).expect("lease");
        let held = |s: &Service| {
            leases::holder(&s.db(), &run("run_x"), 0)
                .expect("holder")
                .is_some()
        };
        assert!(held(&s));
        drop(guard);
        assert!(!held(&s));
    }
}
