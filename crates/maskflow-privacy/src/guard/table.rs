//! The guard's key table: millions of 64-bit keys (already well mixed, see
//! [`super::super::keys`]), each with a 32-bit entry (a source and flags).
//!
//! One big hash table filled key by key misses the cache on nearly every
//! insert once it outgrows it, and that was most of the time of indexing a
//! 100 MB file. Here the keys are split by their top bits into
//! [`PARTS`] small open-addressing tables, and inserts are buffered per
//! part and applied a buffer at a time, so the table being filled is in
//! cache. A look-up is one probe sequence in one small table.
//!
//! While a file is indexed the table is a [`SharedTable`]: every keying
//! thread buffers its inserts in its own [`Scatter`] and applies a full
//! buffer under its part's lock. Entries [`merge`] the same whatever the
//! order of the inserts, so the threads need no other coordination.

use std::sync::Mutex;

/// Bits of a key that pick its part.
const PART_BITS: u32 = 10;
/// How many parts.
pub const PARTS: usize = 1 << PART_BITS;
/// Inserts buffered per part before they are applied: enough that a
/// buffer is applied to a part read in whole into the cache (see
/// [`Part::touch`]); the buffers hold up to 24 MB per keying thread.
const BUFFERED: usize = 2048;
/// The key of an empty slot (a key equal to it is stored as the key below).
/// Not 0: a table filled with 0 comes from the allocator as pages of
/// zeroes that are mapped on first read and copied on first write, a
/// second page fault (and a flush of every core's TLB) per page.
const EMPTY: u64 = u64::MAX;

/// Bits of an entry that hold its source (an index into the guard's labels).
pub const SOURCE: u32 = (1 << 28) - 1;
/// The key is a value of the file (an identifying token, a phrase, a
/// number or a date) from the entry's source.
pub const VALUE: u32 = 1 << 28;
/// The key is the first token of an indexed phrase.
pub const STARTS_PHRASE: u32 = 1 << 29;
/// The key is a phrase of common words only.
pub const COMMON: u32 = 1 << 30;

/// Combines what is known of one key: of its sources as a value, the first
/// label (the lowest source) wins, a key that is not a phrase of common
/// words anywhere stays so, and flags add up. The same whatever the order
/// (commutative and associative), so threads may insert in any order.
fn merge(old: u32, new: u32) -> u32 {
    let starts = (old | new) & STARTS_PHRASE;
    let value = match (old & VALUE != 0, new & VALUE != 0) {
        (true, true) => (old & !STARTS_PHRASE).min(new & !STARTS_PHRASE),
        (true, false) => old & !STARTS_PHRASE,
        (false, true) => new & !STARTS_PHRASE,
        (false, false) => 0,
    };
    value | starts
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

    /// Inserts into a table with room (see [`Part::reserve`]).
    fn insert(&mut self, key: u64, entry: u32) {
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

    /// Grows, once, if `more` inserts would fill it past 70 % (so no insert
    /// of a batch moves the slots [`Part::touch`] loaded).
    fn reserve(&mut self, more: usize) {
        let needed = self.len + more;
        if needed * 10 <= self.keys.len() * 7 {
            return;
        }
        let size = (needed * 10 / 7 + 1).next_power_of_two().max(64);
        let keys = std::mem::replace(&mut self.keys, vec![EMPTY; size]);
        let entries = std::mem::replace(&mut self.entries, vec![u32::MAX; size]);
        self.len = 0;
        for (k, e) in keys.into_iter().zip(entries) {
            if k != EMPTY {
                self.insert(k, e);
            }
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
    fn touch(&self, batch: &[Insert]) {
        let mut seen = 0u64;
        if self.keys.len() <= batch.len() * 16 {
            // One load per cache line: 8 keys, 16 entries.
            seen = self.keys.iter().step_by(8).fold(seen, |a, k| a ^ k);
            seen = (self.entries.iter().step_by(16)).fold(seen, |a, e| a ^ u64::from(*e));
        } else {
            let mask = self.keys.len() - 1;
            for &Insert { key, .. } in batch {
                let i = key as usize & mask;
                seen ^= self.keys[i] ^ u64::from(self.entries[i]);
            }
        }
        std::hint::black_box(seen);
    }

    /// Applies a batch of inserts.
    fn apply(&mut self, batch: &[Insert]) {
        self.reserve(batch.len());
        self.touch(batch);
        for &Insert { key, entry } in batch {
            self.insert(key, entry);
        }
    }
}

/// The table (see the module's doc).
#[derive(Clone, Default)]
pub struct KeyTable {
    parts: Vec<Part>,
    len: usize,
}

impl std::fmt::Debug for KeyTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KeyTable({} keys)", self.len)
    }
}

fn normal(key: u64) -> u64 {
    if key == EMPTY { EMPTY - 1 } else { key }
}

fn part_of(key: u64) -> usize {
    (key >> (64 - PART_BITS)) as usize
}

impl KeyTable {
    /// The entry of `key`.
    pub fn get(&self, key: u64) -> Option<u32> {
        let key = normal(key);
        self.parts.get(part_of(key)).and_then(|p| p.get(key))
    }

    /// How many distinct keys.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.parts.iter().map(|p| p.keys.len() * 12).sum()
    }

    /// The table's parts behind locks, for the keying threads; room is
    /// made for about `expected` more keys first (a table that grows as it
    /// fills moves every key several times).
    pub fn share(mut self, expected: usize) -> SharedTable {
        if self.parts.is_empty() {
            self.parts = vec![Part::default(); PARTS];
        }
        let parts = self
            .parts
            .into_iter()
            .map(|p| Mutex::new((p, false)))
            .collect();
        SharedTable {
            parts,
            expected: expected / PARTS,
        }
    }
}

/// The table while threads fill it (see the module's doc).
pub struct SharedTable {
    /// Each part, and whether room was made in it.
    parts: Vec<Mutex<(Part, bool)>>,
    /// Keys expected per part: room is made for them when the part is
    /// first filled (by the keying threads, so the pages are touched in
    /// parallel).
    expected: usize,
}

impl SharedTable {
    fn apply(&self, p: usize, batch: &[Insert]) {
        // A thread that panicked while holding a part leaves it whole
        // (inserts only write a slot once the table has room).
        let mut guard = self.parts[p].lock().unwrap_or_else(|e| e.into_inner());
        let (part, reserved) = &mut *guard;
        if !*reserved {
            part.reserve(self.expected);
            *reserved = true;
        }
        part.apply(batch);
    }

    /// The filled table.
    pub fn into_table(self) -> KeyTable {
        let parts: Vec<Part> = self
            .parts
            .into_iter()
            .map(|p| p.into_inner().unwrap_or_else(|e| e.into_inner()).0)
            .collect();
        let len = parts.iter().map(|p| p.len).sum();
        KeyTable { parts, len }
    }
}

/// Slots of the filter of recent inserts (a power of two).
const RECENT: usize = 1 << 14;

/// One buffered insert: 12 bytes, not the 16 of a `(u64, u32)`, as the
/// buffers of a 100 MB file's keys go through memory once.
#[derive(Clone, Copy)]
#[repr(C, packed(4))]
struct Insert {
    key: u64,
    entry: u32,
}

/// One keying thread's inserts, buffered per part.
pub struct Scatter {
    pending: Vec<Vec<Insert>>,
    /// The last key that fell in each slot, with what was inserted for it
    /// since: a file repeats its values (a date column, a customer's name,
    /// the first word of its phrases, an ID in several columns), and an
    /// insert that adds nothing is dropped before it costs a cache miss.
    recent: Vec<(u64, u32)>,
}

impl Default for Scatter {
    fn default() -> Self {
        Self {
            pending: vec![Vec::new(); PARTS],
            recent: vec![(EMPTY, 0); RECENT],
        }
    }
}

impl Scatter {
    /// Adds `entry` to `key` (applied to `table` a buffer at a time: call
    /// [`Scatter::flush`] at the end).
    pub fn insert(&mut self, table: &SharedTable, key: u64, entry: u32) {
        let key = normal(key);
        let slot = &mut self.recent[(key >> 20) as usize & (RECENT - 1)];
        if slot.0 == key {
            // What the table holds for the key already includes the slot's
            // entry (merging is a join), so an entry it includes changes nothing.
            let merged = merge(slot.1, entry);
            if merged == slot.1 {
                return;
            }
            slot.1 = merged;
        } else {
            *slot = (key, entry);
        }
        let p = part_of(key);
        let buf = &mut self.pending[p];
        buf.push(Insert { key, entry });
        if buf.len() >= BUFFERED {
            table.apply(p, buf);
            buf.clear();
        }
    }

    /// Applies every buffered insert.
    pub fn flush(&mut self, table: &SharedTable) {
        for (p, buf) in self.pending.iter_mut().enumerate() {
            if !buf.is_empty() {
                table.apply(p, buf);
                buf.clear();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(inserts: &[(u64, u32)], threads: usize) -> KeyTable {
        let shared = KeyTable::default().share(0);
        std::thread::scope(|scope| {
            for chunk in inserts.chunks(inserts.len().div_ceil(threads)) {
                let shared = &shared;
                scope.spawn(move || {
                    let mut s = Scatter::default();
                    for &(k, e) in chunk {
                        s.insert(shared, k, e);
                    }
                    s.flush(shared);
                });
            }
        });
        shared.into_table()
    }

    #[test]
    fn keys_are_found_after_a_flush_and_the_lowest_source_wins_in_any_order() {
        let keys: Vec<u64> = (0..200_000u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        let mut inserts: Vec<(u64, u32)> = (keys.iter().enumerate())
            .map(|(i, k)| (*k, VALUE | (i as u32 & SOURCE)))
            .collect();
        inserts.extend([
            (keys[5], VALUE | 99),
            (keys[5], STARTS_PHRASE),
            (keys[9], VALUE | 2),
            // A flag alone, then a value: the value's source is kept.
            (42, STARTS_PHRASE),
            (42, VALUE | 3),
            (u64::MAX, VALUE | 4),
        ]);
        let one = fill(&inserts, 1);
        inserts.reverse();
        let two = fill(&inserts, 2);
        for t in [one, two] {
            assert_eq!(t.len(), keys.len() + 2);
            assert_eq!(t.get(keys[5]), Some(VALUE | STARTS_PHRASE | 5));
            assert_eq!(t.get(keys[7]), Some(VALUE | 7));
            assert_eq!(t.get(keys[9]), Some(VALUE | 2));
            assert_eq!(t.get(0), Some(VALUE)); // keys[0] is 0
            assert_eq!(t.get(u64::MAX), Some(VALUE | 4));
            assert_eq!(t.get(12345), None);
            assert_eq!(t.get(42), Some(VALUE | STARTS_PHRASE | 3));
        }
    }

    #[test]
    fn a_value_not_of_common_words_anywhere_stays_so() {
        let a = merge(VALUE | COMMON | 1, VALUE | 7);
        assert_eq!(a, VALUE | 7);
        assert_eq!(merge(VALUE | 7, VALUE | COMMON | 1), a);
        assert_eq!(merge(STARTS_PHRASE, 0), STARTS_PHRASE);
    }
}
