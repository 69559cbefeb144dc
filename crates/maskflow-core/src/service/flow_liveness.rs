//! Whether a flow run stored as `running` is really being run (issue 19):
//! by this process, by another live Maskflow process (its lease), or by
//! nobody — its process was killed or crashed, and the run is interrupted.
//! Derived at read time from the lease table; the stored status is never
//! rewritten here, so another process's run is left alone.

use super::Service;
use crate::store::leases;
use maskflow_flows::{RunList, RunStatus, RunView};

/// How deep a chain of subflows is followed to its leased top run.
const MAX_PARENTS: usize = 16;

/// Who runs a run whose status is `running`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Liveness {
    /// This process (in its engine, or under its lease).
    Here,
    /// Another live Maskflow process, by pid.
    Elsewhere(u32),
    /// No live process: its owner died and its lease is dead.
    Interrupted,
}

impl Service {
    /// `view` with `interrupted` / `running_elsewhere_pid` filled in. An
    /// interrupted run is read again once, so a run that ended meanwhile is
    /// not mistaken for a cut-off one.
    pub(super) fn with_liveness(&self, view: RunView) -> RunView {
        let mut view = view;
        for attempt in 0..2 {
            if view.status != RunStatus::Running {
                return view;
            }
            match self.liveness(&view.conversation_id, view.parent_id.clone()) {
                Liveness::Here => return view,
                Liveness::Elsewhere(pid) => {
                    view.running_elsewhere_pid = Some(pid);
                    return view;
                }
                Liveness::Interrupted if attempt == 0 => {
                    match self.flows().get_run(&view.conversation_id) {
                        Ok(fresh) => view = fresh,
                        Err(_) => break,
                    }
                }
                Liveness::Interrupted => {}
            }
        }
        view.interrupted = view.status == RunStatus::Running;
        view
    }

    /// Whether run `id` is stored as running with no live process running it.
    pub(super) fn flow_run_interrupted(&self, id: &str) -> bool {
        self.flows()
            .get_run(id)
            .is_ok_and(|view| self.with_liveness(view).interrupted)
    }

    /// `list` with each running run's liveness filled in.
    pub(super) fn list_with_liveness(&self, mut list: RunList) -> RunList {
        for run in &mut list.runs {
            if run.status != RunStatus::Running {
                continue;
            }
            // Only running runs are looked at again: few, and one read each.
            let Ok(view) = self.flows().get_run(&run.conversation_id) else {
                continue;
            };
            let view = self.with_liveness(view);
            run.status = view.status;
            run.interrupted = view.interrupted;
            run.running_elsewhere_pid = view.running_elsewhere_pid;
        }
        list
    }

    /// Who runs run `id` (a subflow's child is run under its top run's lease).
    fn liveness(&self, id: &str, parent_id: Option<String>) -> Liveness {
        let mut id = id.to_owned();
        let mut parent_id = parent_id;
        for _ in 0..MAX_PARENTS {
            match self.run_holder(&id) {
                Some(found) => return found,
                None => match parent_id.take() {
                    Some(parent) => {
                        parent_id = self.flows().get_run(&parent).ok().and_then(|p| p.parent_id);
                        id = parent;
                    }
                    None => return Liveness::Interrupted,
                },
            }
        }
        Liveness::Interrupted
    }

    /// Who holds run `id` itself, if a live process does.
    fn run_holder(&self, id: &str) -> Option<Liveness> {
        if self.flows().inflight_id(id).is_some() {
            return Some(Liveness::Here);
        }
        let resource = format!("flow_run:{id}");
        let now_ms = i64::try_from(self.inner.clock.now_ms()).unwrap_or(i64::MAX);
        let me = self.inner.owner.clone();
        let db = self.db();
        // A database that cannot be read says nothing: never call a run cut off then.
        let Ok(elsewhere) = leases::held_elsewhere(&db, &resource, &me, now_ms) else {
            return Some(Liveness::Here);
        };
        if let Some(lease) = elsewhere {
            return Some(Liveness::Elsewhere(lease.owner_pid));
        }
        match leases::holder(&db, &resource, now_ms) {
            Ok(Some(lease)) if lease.owner_id == me.id => Some(Liveness::Here),
            Ok(_) => None,
            Err(_) => Some(Liveness::Here),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::service::tests::service_with;
    use crate::store::leases::LeaseOwner;
    use maskflow_flows::store::{self as fstore, RunRow};

    fn stored(s: &Service, id: &str, status: RunStatus, parent: Option<&str>) {
        let row = RunRow {
            id: id.into(),
            flow_name: "review".into(),
            title: "Flow: review".into(),
            status,
            definition: serde_json::json!({}),
            state: Default::default(),
            pending: None,
            error: None,
            working_folder: None,
            archived: false,
            stop_requested: false,
            parent_id: parent.map(str::to_owned),
            depth: u32::from(parent.is_some()),
            created_at: "2026-01-01T00:00:00Z".into(),
            updated_at: "2026-01-01T00:00:00Z".into(),
        };
        fstore::insert_run(&s.db(), &row, "local").expect("insert");
    }

    /// (interrupted, running elsewhere) as the API tells them, for the view
    /// and the list alike.
    fn told(s: &Service, id: &str) -> (bool, Option<u32>) {
        let view = s.flow_run(id).expect("view");
        let list = s.flow_runs("review").expect("list");
        // A subflow's child is not listed on its own.
        let Some(summary) = list.runs.iter().find(|r| r.conversation_id == id) else {
            assert!(view.parent_id.is_some(), "{id} listed");
            return (view.interrupted, view.running_elsewhere_pid);
        };
        assert_eq!(
            (summary.interrupted, summary.running_elsewhere_pid),
            (view.interrupted, view.running_elsewhere_pid),
            "the list and the view agree on {id}"
        );
        (view.interrupted, view.running_elsewhere_pid)
    }

    fn lease_top(s: &Service, owner: &LeaseOwner) {
        leases::acquire(&s.db(), "flow_run:flow_top", owner, 0, i64::MAX / 2).expect("lease");
    }

    #[test]
    fn a_running_run_is_here_elsewhere_or_interrupted_by_its_lease_and_its_subflow_follows() {
        let home = tempfile::tempdir().expect("tmp");
        let s = service_with(home.path(), Arc::new(maskflow_llm::Unconfigured));
        stored(&s, "flow_top", RunStatus::Running, None);
        stored(&s, "flow_child", RunStatus::Running, Some("flow_top"));
        stored(&s, "flow_done", RunStatus::Completed, None);

        // No lease at all: nobody runs them.
        assert_eq!(told(&s, "flow_top"), (true, None));
        assert_eq!(
            told(&s, "flow_child"),
            (true, None),
            "its top run is cut off"
        );
        assert_eq!(told(&s, "flow_done"), (false, None), "only running runs");
        let sidebar = s.list_conversations(None).expect("conversations");
        let flagged = |id: &str| {
            sidebar
                .conversations
                .iter()
                .find(|c| c.conversation_id == id)
                .map(|c| c.interrupted)
        };
        assert_eq!(flagged("flow_top"), Some(true));
        assert_eq!(flagged("flow_done"), Some(false));

        // Another live process holds the top run: both are run there.
        let mut other = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .expect("sleep");
        let elsewhere = LeaseOwner {
            pid: other.id(),
            id: "proc_other".into(),
        };
        lease_top(&s, &elsewhere);
        assert_eq!(told(&s, "flow_top"), (false, Some(other.id())));
        assert_eq!(told(&s, "flow_child"), (false, Some(other.id())));

        // It is killed: its lease has not run out, but it protects nothing.
        other.kill().expect("kill");
        other.wait().expect("reap");
        assert_eq!(told(&s, "flow_top"), (true, None));
        assert_eq!(told(&s, "flow_child"), (true, None));

        // This process takes it over: running here, neither flag set.
        leases::release(&s.db(), "flow_run:flow_top", &elsewhere).expect("release");
        lease_top(&s, &s.inner.owner.clone());
        assert_eq!(told(&s, "flow_top"), (false, None));
        assert_eq!(told(&s, "flow_child"), (false, None));

        // Nothing of this rewrote a stored status.
        for id in ["flow_top", "flow_child"] {
            let row = fstore::get_run(&s.db(), id).expect("read").expect("row");
            assert_eq!(row.status, RunStatus::Running, "{id}");
        }
    }
}
