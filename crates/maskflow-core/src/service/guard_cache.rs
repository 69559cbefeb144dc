//! The privacy guard indexes of the versions messaged most recently.
//!
//! An index is built from a version's files (every key of their values) and
//! Maskflow's own vocabulary: tens of kilobytes for a version without files,
//! megabytes for one with large files. Kept for every version ever messaged,
//! they grew the server by ~75 KB a workflow for as long as it ran (the soak
//! benchmark, issue 19); only the few versions in use are kept now, the others
//! are rebuilt from their files when messaged again.

use std::collections::VecDeque;
use std::sync::Arc;

use maskflow_privacy::guard::GuardIndex;

/// How many versions' indexes are kept: a person works on a few workflows at
/// a time; rebuilding one that fell out costs a read of its files.
pub(super) const CAPACITY: usize = 8;

/// Least recently used first out; a handful of entries, so a list is enough.
#[derive(Debug)]
pub(super) struct GuardCache {
    capacity: usize,
    /// Most recently used last.
    entries: VecDeque<(String, Arc<GuardIndex>)>,
}

impl Default for GuardCache {
    fn default() -> Self {
        Self::with_capacity(CAPACITY)
    }
}

impl GuardCache {
    /// An empty cache keeping at most `capacity` versions (at least one).
    pub(super) fn with_capacity(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        Self {
            capacity,
            entries: VecDeque::with_capacity(capacity),
        }
    }

    /// The index of `version_id`, marked as just used.
    pub(super) fn get(&mut self, version_id: &str) -> Option<Arc<GuardIndex>> {
        let at = self.entries.iter().position(|(v, _)| v == version_id)?;
        let entry = self.entries.remove(at)?;
        let index = entry.1.clone();
        self.entries.push_back(entry);
        Some(index)
    }

    /// Keeps `index` for `version_id`, forgetting the least recently used
    /// version when full.
    pub(super) fn insert(&mut self, version_id: &str, index: Arc<GuardIndex>) {
        if let Some(at) = self.entries.iter().position(|(v, _)| v == version_id) {
            self.entries.remove(at);
        }
        while self.entries.len() >= self.capacity {
            self.entries.pop_front();
        }
        self.entries.push_back((version_id.to_owned(), index));
    }

    /// How many versions are kept.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> Arc<GuardIndex> {
        Arc::new(GuardIndex::new())
    }

    #[test]
    fn keeps_at_most_its_capacity_however_many_versions_are_messaged() {
        let mut cache = GuardCache::default();
        for i in 0..1000 {
            cache.insert(&format!("ver_{i}"), index());
        }
        assert_eq!(cache.len(), CAPACITY);
        assert!(cache.get("ver_0").is_none(), "the oldest was forgotten");
        assert!(cache.get("ver_999").is_some(), "the newest is kept");
    }

    #[test]
    fn forgets_the_least_recently_used_version_not_the_oldest_inserted() {
        let mut cache = GuardCache::with_capacity(2);
        let first = index();
        cache.insert("ver_a", first.clone());
        cache.insert("ver_b", index());
        // Using ver_a makes ver_b the one to go.
        let got = cache.get("ver_a").expect("ver_a is kept");
        assert!(
            Arc::ptr_eq(&got, &first),
            "the same index, not a rebuilt one"
        );
        cache.insert("ver_c", index());
        assert!(cache.get("ver_b").is_none());
        assert!(cache.get("ver_a").is_some());
        assert!(cache.get("ver_c").is_some());
    }

    #[test]
    fn inserting_a_version_again_replaces_it_without_growing() {
        let mut cache = GuardCache::with_capacity(3);
        cache.insert("ver_a", index());
        let newer = index();
        cache.insert("ver_a", newer.clone());
        assert_eq!(cache.len(), 1);
        let got = cache.get("ver_a").expect("kept");
        assert!(Arc::ptr_eq(&got, &newer));
    }

    #[test]
    fn a_zero_capacity_still_keeps_the_version_in_use() {
        let mut cache = GuardCache::with_capacity(0);
        cache.insert("ver_a", index());
        assert!(cache.get("ver_a").is_some());
        cache.insert("ver_b", index());
        assert_eq!(cache.len(), 1);
    }
}
