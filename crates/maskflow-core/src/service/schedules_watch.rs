//! The scheduler: while the app or `maskflow serve` is up, a thread of its
//! own ticks (cron times, retries after a back-off) and watches the folders
//! of watched-folder schedules with `notify`, debounced, so a file being
//! written is read once it has settled. Both shells start it with one call,
//! [`Service::start_scheduler`]. What it fires is decided in
//! `schedules_run`, against the service's clock.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Weak};

use std::time::Duration;

use notify_debouncer_full::notify::RecursiveMode;
use notify_debouncer_full::{DebounceEventResult, new_debouncer};
use tokio::sync::mpsc;

use super::{Inner, Service};
use crate::store::schedules as rows;

/// How often the scheduler looks at the schedules (cron times are minutes).
const TICK: Duration = Duration::from_secs(5);
/// How long a file must be quiet before it is read.
const SETTLE: Duration = Duration::from_secs(2);

impl Service {
    /// Starts the scheduler thread; call it once (each shell does, after
    /// opening the service). It ends when the service is dropped.
    pub fn start_scheduler(&self) {
        let weak = Arc::downgrade(&self.inner);
        let spawned = std::thread::Builder::new()
            .name("maskflow-scheduler".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build();
                match runtime {
                    Ok(rt) => rt.block_on(scheduler_loop(weak)),
                    Err(e) => eprintln!("maskflow: the scheduler could not start: {e}"),
                }
            });
        if let Err(e) = spawned {
            eprintln!("maskflow: the scheduler could not start: {e}");
        }
    }
}

/// Ticks and watches until the service is gone.
async fn scheduler_loop(weak: Weak<Inner>) {
    let (tx, mut rx) = mpsc::unbounded_channel::<PathBuf>();
    let debouncer = new_debouncer(SETTLE, None, move |result: DebounceEventResult| {
        if let Ok(events) = result {
            for event in events {
                for path in &event.paths {
                    let _ = tx.send(path.clone());
                }
            }
        }
    });
    let mut debouncer = match debouncer {
        Ok(d) => Some(d),
        Err(e) => {
            eprintln!(
                "maskflow: watching folders is not available ({e}); watched folders are read at each tick"
            );
            None
        }
    };
    // Folder → the schedules watching it.
    let mut watched: BTreeMap<PathBuf, Vec<String>> = BTreeMap::new();
    loop {
        let Some(inner) = weak.upgrade() else { return };
        let service = Service { inner };
        let wanted = folder_schedules(&service);
        let mut fresh = Vec::new();
        for (folder, ids) in &wanted {
            if !watched.contains_key(folder) {
                if let Some(d) = debouncer.as_mut()
                    && let Err(e) = d.watch(folder, RecursiveMode::NonRecursive)
                {
                    eprintln!("maskflow: cannot watch {}: {e}", folder.display());
                }
                // Files that came while it was not watched run now.
                fresh.extend(ids.iter().cloned());
            }
        }
        for folder in watched.keys() {
            if !wanted.contains_key(folder)
                && let Some(d) = debouncer.as_mut()
            {
                let _ = d.unwatch(folder);
            }
        }
        if debouncer.is_none() {
            fresh = wanted.values().flatten().cloned().collect();
        }
        watched = wanted;
        for id in fresh {
            scan(&service, &id).await;
        }
        if let Err(e) = service.run_due_schedules().await {
            eprintln!("maskflow: running schedules: {e}");
        }
        drop(service);
        // Wait for a tick, or for files to settle in a watched folder.
        let mut changed: BTreeSet<PathBuf> = BTreeSet::new();
        if let Ok(Some(path)) = tokio::time::timeout(TICK, rx.recv()).await {
            changed.extend(path.parent().map(PathBuf::from));
            while let Ok(path) = rx.try_recv() {
                changed.extend(path.parent().map(PathBuf::from));
            }
        }
        let Some(inner) = weak.upgrade() else { return };
        let service = Service { inner };
        for folder in changed {
            for id in watched.get(&folder).into_iter().flatten() {
                scan(&service, id).await;
            }
        }
    }
}

async fn scan(service: &Service, id: &str) {
    if let Err(e) = service.scan_watched_folder(id).await {
        eprintln!("maskflow: schedule {id}: {e}");
    }
}

/// The folders of running watched-folder schedules.
fn folder_schedules(service: &Service) -> BTreeMap<PathBuf, Vec<String>> {
    let mut map: BTreeMap<PathBuf, Vec<String>> = BTreeMap::new();
    let list = rows::list(&service.db()).unwrap_or_default();
    for row in list {
        if let (Some(folder), false) = (row.folder, row.paused) {
            map.entry(PathBuf::from(folder)).or_default().push(row.id);
        }
    }
    map
}
