//! The guard's key table: millions of 64-bit keys (already well mixed, see
//! [`super::super::keys`]), each with a 32-bit entry (a source and flags).
//!
//! One big hash table filled key by key misses the cache on nearly every
//! insert once it outgrows it, and that was most of the time of indexing a
//! 100 MB file. Here the keys are split by their top bits into
//! [`PARTS`] small open-addressing tables, and inserts are buffered per
//! part and applied a buffer at a time, so the table being filled is in
//! cache. A look-up is one probe sequence in one small table.

/// Bits of a key that pick its part.
const PART_BITS: u32 = 10;
/// How many parts.
pub const PARTS: usize = 1 << PART_BITS;
/// Inserts buffered per part before they are applied: enough that a
/// buffer is applied to a part read in whole into the cache (see
/// [`Part::touch`]); the buffers hold up to 32 MB while a file is indexed.
const BUFFERED: usize = 2048;
/// The key of an empty slot (a key that is 0 is stored as 1).
const EMPTY: u64 = 0;

/// Bits of an entry that hold its source (an index into the guard's labels).
pub const SOURCE: u32 = (1 << 28) - 1;
/// The key is a value of the file (an identifying token, a phrase, a
/// number or a date) from the entry's source.
pub const VALUE: u32 = 1 << 28;
/// The key is the first token of an indexed phrase.
pub const STARTS_PHRASE: u32 = 1 << 29;
/// The key is a phrase of common words only.
pub const COMMON: u32 = 1 << 30;

/// Combines what is known of one key: the first source that gave it as a
/// value wins, flags add up.
fn merge(old: u32, new: u32) -> u32 {
    if old & VALUE != 0 {
        old | (new & STARTS_PHRASE)
    } else {
        new | (old & STARTS_PHRASE)
    }
}

/// One part: a linear-probing table, at most 70 % full.
#[derive(Clone, Default)]
struct Part {
    keys: Vec<u64>,
    entries: Vec<u32>,
    len: usize,
}

impl Part {
    fn get(&self, key: u64) -> Option<u32> {
        if self.keys.is_empty() {
            return None;
        }
        let mask = self.keys.len() - 1;
        let mut i = key as usize & mask;
        loop {
            let k = self.keys[i];
            if k == key {
                return Some(self.entries[i]);
            }
            if k == EMPTY {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    fn insert(&mut self, key: u64, entry: u32) {
        if (self.len + 1) * 10 > self.keys.len() * 7 {
            self.grow();
        }
        let mask = self.keys.len() - 1;
        let mut i = key as usize & mask;
        loop {
            let k = self.keys[i];
            if k == key {
                self.entries[i] = merge(self.entries[i], entry);
                return;
            }
            if k == EMPTY {
                self.keys[i] = key;
                self.entries[i] = entry;
                self.len += 1;
                return;
            }
            i = (i + 1) & mask;
        }
    }

    /// Grows now if `more` inserts would need it (so no insert of a batch
    /// moves the slots [`Part::touch`] loaded).
    fn reserve(&mut self, more: usize) {
        while (self.len + more) * 10 > self.keys.len() * 7 {
            self.grow();
        }
    }

    /// Brings the slots a batch will probe into the cache before any key
    /// is inserted. The table is far bigger than the cache, so inserting
    /// key after key waits on a miss each time. A part with few slots per
    /// key of the batch is read in whole, in order (the hardware prefetches
    /// it, a line costs a fraction of a miss, and it then fits in L2); else
    /// the batch's first slots are loaded back to back, with nothing
    /// depending on them, so their misses are in flight together. (A safe,
    /// portable prefetch: the loaded values only feed a `black_box`.)
    fn touch(&self, batch: &[(u64, u32)]) {
        let mut seen = 0u64;
        if self.keys.len() <= batch.len() * 16 {
            // One load per cache line: 8 keys, 16 entries.
            seen = self.keys.iter().step_by(8).fold(seen, |a, k| a ^ k);
            seen = (self.entries.iter().step_by(16)).fold(seen, |a, e| a ^ u64::from(*e));
        } else {
            let mask = self.keys.len() - 1;
            for &(k, _) in batch {
                let i = k as usize & mask;
                seen ^= self.keys[i] ^ u64::from(self.entries[i]);
            }
        }
        std::hint::black_box(seen);
    }

    fn grow(&mut self) {
        let size = (self.keys.len() * 2).max(64);
        let keys = std::mem::replace(&mut self.keys, vec![EMPTY; size]);
        let entries = std::mem::replace(&mut self.entries, vec![0; size]);
        self.len = 0;
        for (k, e) in keys.into_iter().zip(entries) {
            if k != EMPTY {
                self.insert(k, e);
            }
        }
    }
}

/// Slots of the filter of recent inserts (a power of two).
const RECENT: usize = 1 << 14;

/// The table (see the module's doc).
#[derive(Clone, Default)]
pub struct KeyTable {
    parts: Vec<Part>,
    pending: Vec<Vec<(u64, u32)>>,
    /// The last insert that fell in each slot: a file repeats its values
    /// (a date column, a customer's name, the first word of its phrases),
    /// and inserting the same key with the same entry again changes
    /// nothing, so a repeat is dropped before it costs a cache miss.
    recent: Vec<(u64, u32)>,
    len: usize,
}

impl std::fmt::Debug for KeyTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KeyTable({} keys)", self.len)
    }
}

fn normal(key: u64) -> u64 {
    if key == EMPTY { 1 } else { key }
}

fn part_of(key: u64) -> usize {
    (key >> (64 - PART_BITS)) as usize
}

impl KeyTable {
    /// Adds `entry` to `key` (buffered: call [`KeyTable::flush`] before
    /// looking keys up).
    pub fn insert(&mut self, key: u64, entry: u32) {
        if self.parts.is_empty() {
            self.parts = vec![Part::default(); PARTS];
        }
        if self.pending.is_empty() {
            self.pending = vec![Vec::new(); PARTS];
        }
        let key = normal(key);
        if self.recent.is_empty() {
            self.recent = vec![(EMPTY, 0); RECENT];
        }
        let slot = &mut self.recent[(key >> 20) as usize & (RECENT - 1)];
        if *slot == (key, entry) {
            return;
        }
        *slot = (key, entry);
        let p = part_of(key);
        let buf = &mut self.pending[p];
        buf.push((key, entry));
        if buf.len() >= BUFFERED {
            self.apply(p);
        }
    }

    fn apply(&mut self, p: usize) {
        let part = &mut self.parts[p];
        let before = part.len;
        let pending = &mut self.pending[p];
        if pending.is_empty() {
            return;
        }
        part.reserve(pending.len());
        part.touch(pending);
        for (k, e) in pending.drain(..) {
            part.insert(k, e);
        }
        self.len += part.len - before;
    }

    /// Applies every buffered insert.
    pub fn flush(&mut self) {
        for p in 0..self.pending.len() {
            self.apply(p);
        }
        // The buffers are only needed while a file is indexed (and entries
        // may change between files).
        self.pending = Vec::new();
        self.recent = Vec::new();
    }

    /// The entry of `key`.
    pub fn get(&self, key: u64) -> Option<u32> {
        debug_assert!(self.pending.iter().all(Vec::is_empty));
        let key = normal(key);
        self.parts.get(part_of(key)).and_then(|p| p.get(key))
    }

    /// How many distinct keys.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Rewrites every entry (keys stay).
    pub fn update(&mut self, mut f: impl FnMut(u32) -> u32) {
        for part in &mut self.parts {
            for (k, e) in part.keys.iter().zip(part.entries.iter_mut()) {
                if *k != EMPTY {
                    *e = f(*e);
                }
            }
        }
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.parts.iter().map(|p| p.keys.len() * 12).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_found_after_a_flush_and_the_first_source_wins() {
        let mut t = KeyTable::default();
        let keys: Vec<u64> = (0..200_000u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        for (i, k) in keys.iter().enumerate() {
            t.insert(*k, VALUE | (i as u32 & SOURCE));
        }
        t.insert(keys[5], VALUE | 99);
        t.insert(keys[5], STARTS_PHRASE);
        t.flush();
        assert_eq!(t.len(), keys.len());
        assert_eq!(t.get(keys[5]), Some(VALUE | STARTS_PHRASE | 5));
        assert_eq!(t.get(keys[7]), Some(VALUE | 7));
        assert_eq!(t.get(0), Some(VALUE)); // keys[0] is 0, kept as 1
        assert_eq!(t.get(12345), None);
        // A flag alone, then a value: the value's source is kept.
        t.insert(42, STARTS_PHRASE);
        t.insert(42, VALUE | 3);
        t.flush();
        assert_eq!(t.get(42), Some(VALUE | STARTS_PHRASE | 3));
    }
}
