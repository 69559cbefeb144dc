//! Ids and time, passed into the domain so that tests are deterministic.
//!
//! Ids are a prefix (`wf_`, `wv_`, `msg_`, `file_`) and a ULID: unique, and
//! sortable by creation time as plain strings. Times are RFC 3339 UTC strings
//! with milliseconds, which also sort as strings.
//!
//! It must never depend on another Maskflow crate: everything else uses it.

#![deny(missing_docs)]

use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use ulid::Ulid;

/// A source of the current time, in milliseconds since the Unix epoch.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    fn now_ms(&self) -> u64;
}

/// The real wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0)
    }
}

/// A clock that advances by one millisecond at each reading (for tests).
#[derive(Debug)]
pub struct StepClock(Mutex<u64>);

impl StepClock {
    /// A clock starting at `start_ms`.
    pub fn new(start_ms: u64) -> Self {
        Self(Mutex::new(start_ms))
    }
}

impl Clock for StepClock {
    fn now_ms(&self) -> u64 {
        let mut t = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *t += 1;
        *t
    }
}

/// A source of new ids.
pub trait IdGen: Send + Sync + std::fmt::Debug {
    /// A new id `<prefix>_<unique part>`, greater than every earlier one.
    fn next_id(&self, prefix: &str) -> String;
}

/// ULID-based ids, monotonic within one millisecond.
#[derive(Debug)]
pub struct UlidGen {
    clock: std::sync::Arc<dyn Clock>,
    last: Mutex<Option<Ulid>>,
}

impl UlidGen {
    /// Ids timed by `clock`.
    pub fn new(clock: std::sync::Arc<dyn Clock>) -> Self {
        Self {
            clock,
            last: Mutex::new(None),
        }
    }
}

impl IdGen for UlidGen {
    fn next_id(&self, prefix: &str) -> String {
        let now = self.clock.now_ms();
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let next = match *last {
            Some(prev) if prev.timestamp_ms() >= now => prev
                .increment()
                .unwrap_or_else(|_| Ulid::from_parts(prev.timestamp_ms() + 1, 0)),
            _ => Ulid::from_parts(now, Ulid::generate().random()),
        };
        *last = Some(next);
        format!("{prefix}_{}", next.to_string().to_ascii_lowercase())
    }
}

/// A random secret of 40 hex digits (160 bits from the OS-seeded CSPRNG),
/// e.g. for the token of `maskflow serve`.
pub fn random_token() -> String {
    let a = Ulid::generate().random();
    let b = Ulid::generate().random();
    format!("{a:020x}{b:020x}")
}

/// Formats milliseconds since the epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn format_rfc3339(ms: u64) -> String {
    let secs = ms / 1000;
    let millis = ms % 1000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (h, m, s) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{m:02}:{s:02}.{millis:03}Z")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn tokens_are_long_and_differ() {
        let (a, b) = (random_token(), random_token());
        assert_eq!(a.len(), 40);
        assert_ne!(a, b);
    }

    #[test]
    fn formats_known_instants() {
        assert_eq!(format_rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            format_rfc3339(1_705_312_800_123),
            "2024-01-15T10:00:00.123Z"
        );
        assert_eq!(format_rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn ids_are_prefixed_unique_and_sorted_even_within_one_millisecond() {
        #[derive(Debug)]
        struct Frozen;
        impl Clock for Frozen {
            fn now_ms(&self) -> u64 {
                1_700_000_000_000
            }
        }
        let generator = UlidGen::new(Arc::new(Frozen));
        let ids: Vec<String> = (0..100).map(|_| generator.next_id("wf")).collect();
        assert!(ids.iter().all(|i| i.starts_with("wf_") && i.len() == 29));
        let mut sorted = ids.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted, ids);
    }
}
