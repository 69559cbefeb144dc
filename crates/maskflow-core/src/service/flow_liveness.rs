//! Whether a flow run stored as `running` is really being run (issue 19):
//! by this process, by another live Maskflow process (its lease), or by
//! nobody — its process was killed or crashed, and the run is interrupted.
//! Derived at read time from the lease table; the stored status is never
//! rewritten here, so another process's run is left alone.

use super::Service;
use crate::flows::{RunList, RunStatus, RunView};
use crate::store::leases::{self, LeaseOwner};

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
        let me = LeaseOwner::this_process();
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
