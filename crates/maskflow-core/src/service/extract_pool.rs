//! Where files are extracted, profiled and counted for categories: on a
//! thread of their own, off the async workers and tokio's blocking pool,
//! at most [`ExtractPool::slots`] at once, at a lower scheduling priority.
//!
//! Why (#29 point 4): an extraction is seconds of CPU for a large file.
//! Run on tokio's blocking pool, eight at once on two cores left the calls
//! every client waits for (listing workflows, reading a version) a fraction
//! of a core: their p99 went from a few milliseconds to 216 ms. Bounded to
//! the cores but one, and niced, an upload takes the CPU the interactive
//! calls leave; on an idle machine it runs as fast as before. A job past
//! the bound waits for a slot (the caller says so to the user); the wait
//! is bounded by the uploads ahead of it, each bounded by the upload limit.

use std::sync::Arc;

use tokio::sync::Semaphore;

use crate::error::{CoreError, Result};

/// How much nicer than the server's other threads an extraction runs
/// (Linux: a thread's own `nice`; an unprivileged process may raise it).
#[cfg(target_os = "linux")]
const EXTRACT_NICE: libc::c_int = 10;

/// The extraction slots of one service.
#[derive(Debug)]
pub(super) struct ExtractPool {
    permits: Arc<Semaphore>,
    slots: usize,
}

impl ExtractPool {
    /// At most `slots` jobs at once (at least one).
    pub(super) fn new(slots: usize) -> Self {
        let slots = slots.max(1);
        Self {
            permits: Arc::new(Semaphore::new(slots)),
            slots,
        }
    }

    /// One slot per core but one, so a core stays for serving (one on a
    /// one- or two-core machine).
    pub(super) fn sized_from_cores() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self::new(cores.saturating_sub(1))
    }

    /// How many jobs may run at once.
    pub(super) fn slots(&self) -> usize {
        self.slots
    }

    /// Runs `job` on a thread of its own once a slot is free; `waiting` is
    /// called first when none is. The slot is held until the job returns,
    /// even when the caller stopped waiting for it (the CPU is busy all the same).
    pub(super) async fn run<T: Send + 'static>(
        &self,
        waiting: impl FnOnce(),
        job: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T> {
        let permit = match self.permits.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                waiting();
                self.permits
                    .clone()
                    .acquire_owned()
                    .await
                    .map_err(|e| CoreError::Corrupt(format!("the extraction slots: {e}")))?
            }
        };
        let (tx, rx) = tokio::sync::oneshot::channel();
        std::thread::Builder::new()
            .name("maskflow-extract".into())
            .spawn(move || {
                lower_priority();
                let out = job();
                drop(permit);
                let _ = tx.send(out);
            })
            .map_err(|e| CoreError::io("starting an extraction thread".to_owned(), e))?;
        rx.await
            .map_err(|_| CoreError::Corrupt("the extractor stopped".into()))
    }
}

/// Lowers the calling thread's priority (Linux's per-thread `nice`).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // gettid and setpriority on this thread only: no pointers, no preconditions
fn lower_priority() {
    // SAFETY: both calls take plain integers and act on the calling thread;
    // a failure (a sandbox refusing it) leaves the priority as it was.
    unsafe {
        let tid = libc::gettid();
        let _ = libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, EXTRACT_NICE);
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_priority() {}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn no_more_jobs_run_at_once_than_slots_and_the_rest_wait() {
        let pool = Arc::new(ExtractPool::new(2));
        let counters = || Arc::new(AtomicUsize::new(0));
        let (running, most, waited, release) = (counters(), counters(), counters(), counters());
        let jobs: Vec<_> = (0..6)
            .map(|i| {
                let (pool, running, most, waited, release) = (
                    pool.clone(),
                    running.clone(),
                    most.clone(),
                    waited.clone(),
                    release.clone(),
                );
                tokio::spawn(async move {
                    let job = move || {
                        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        while release.load(Ordering::SeqCst) == 0 {
                            std::thread::sleep(Duration::from_millis(1));
                        }
                        running.fetch_sub(1, Ordering::SeqCst);
                        i
                    };
                    let waiting = move || {
                        waited.fetch_add(1, Ordering::SeqCst);
                    };
                    pool.run(waiting, job).await
                })
            })
            .collect();
        // Every job past the two slots is told it waits while the two hold them.
        for _ in 0..10_000 {
            if waited.load(Ordering::SeqCst) == 4 && running.load(Ordering::SeqCst) == 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        assert_eq!(waited.load(Ordering::SeqCst), 4, "four jobs wait");
        assert_eq!(running.load(Ordering::SeqCst), 2, "two run");
        release.store(1, Ordering::SeqCst);
        let mut out = Vec::new();
        for j in jobs {
            out.push(j.await.expect("task").expect("job"));
        }
        out.sort_unstable();
        assert_eq!(out, [0, 1, 2, 3, 4, 5], "every job ran once");
        assert_eq!(most.load(Ordering::SeqCst), 2, "two at once, never more");
    }

    #[tokio::test]
    async fn a_job_that_panics_is_an_error_and_frees_its_slot() {
        let pool = ExtractPool::new(1);
        let err = pool.run(|| {}, || -> u8 { panic!("a bad file") }).await;
        assert!(err.is_err());
        let ok = pool.run(|| panic!("a free slot: no wait"), || 7).await;
        assert_eq!(ok.expect("ran"), 7);
    }

    #[test]
    fn at_least_one_slot() {
        assert_eq!(ExtractPool::new(0).slots(), 1);
        assert!(ExtractPool::sized_from_cores().slots() >= 1);
    }
}
