//! Cells seen before in the same column: a repeated cell gives the same
//! keys with the same source, and inserting them again changes nothing
//! (entries merge as a join: the lowest source wins, flags add up), so it is not keyed
//! again. Files repeat their values (dates, statuses, cities, a customer's
//! name on each of their orders); keying a cell costs far more than
//! recognising it.
//!
//! A cell is recognised by a 128-bit fingerprint of its bytes, so two
//! different cells share one with odds of about 2⁻¹²⁸ per pair: far below
//! any other way a value could be missed. A column with many distinct
//! values (names, amounts, IDs) stops being tracked: the set would outgrow
//! the cache. What stays tracked are columns of a few values repeated
//! (dates, statuses, cities, products).

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::keys::{KeyHasher, load_tail};

/// Most distinct cells tracked per column; past it the column is not
/// tracked. The set must stay in the core's own cache: at 64 K cells (4 MB)
/// a look-up was a cache miss and cost more than keying the cell again.
const MAX_TRACKED: usize = 1 << 12;
/// Longer cells are not tracked: prose rarely repeats, and hashing it
/// costs what keying it saves.
const MAX_CELL_BYTES: usize = 128;

/// A cell's fingerprint: two independent 64-bit hashes of its bytes.
pub(super) type Fingerprint = (u64, u64);

/// What is known of a cell before it is keyed.
pub(super) enum Seen {
    /// Keyed before in this column; with the key of its whole-cell phrase,
    /// if it had one (counted again for the column's variety).
    Before(Option<u64>),
    /// Not seen yet: remember it once keyed.
    New(Fingerprint),
    /// Not tracked (the column or the cell).
    Untracked,
}

/// The cells seen in one column.
#[derive(Debug, Default)]
pub(super) struct Repeats {
    cells: HashMap<Fingerprint, Option<u64>, BuildHasherDefault<KeyHasher>>,
    off: bool,
}

impl Repeats {
    /// Whether `value` was seen before in this column.
    pub(super) fn seen(&self, value: &str) -> Seen {
        if self.off || value.len() > MAX_CELL_BYTES {
            return Seen::Untracked;
        }
        let fp = fingerprint(value.as_bytes());
        match self.cells.get(&fp) {
            Some(phrase) => Seen::Before(*phrase),
            None => Seen::New(fp),
        }
    }

    /// Remembers a cell just keyed, with its whole-cell phrase key.
    pub(super) fn remember(&mut self, fp: Fingerprint, phrase: Option<u64>) {
        if self.cells.len() >= MAX_TRACKED {
            self.off = true;
            self.cells = HashMap::default();
            return;
        }
        self.cells.insert(fp, phrase);
    }
}

/// Two hashes of `bytes`, eight bytes a round, each a folded 64×64→128-bit
/// multiply with its own constant; the length seeds both, so trailing zero
/// bytes count.
fn fingerprint(bytes: &[u8]) -> Fingerprint {
    const A: u64 = 0xa076_1d64_78bd_642f;
    const B: u64 = 0xe703_7ed1_a0b4_28db;
    let fold = |h: u64, w: u64, k: u64| {
        let p = u128::from(h ^ w) * u128::from(k);
        (p as u64) ^ ((p >> 64) as u64)
    };
    let len = bytes.len() as u64;
    let (mut a, mut b) = (
        len ^ 0x8ebc_6af0_9c88_c6e3,
        len.rotate_left(32) ^ 0x5899_65cc_7537_4cc3,
    );
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let w = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        (a, b) = (fold(a, w, A), fold(b, w, B));
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let w = load_tail(rest);
        (a, b) = (fold(a, w, A), fold(b, w, B));
    }
    // A last round each, so every input bit reaches every output bit.
    (fold(a, A, B), fold(b, B, A))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_is_seen_again_only_as_itself_and_a_varied_column_stops_being_tracked() {
        let mut r = Repeats::default();
        let Seen::New(fp) = r.seen("2024-03-14") else {
            panic!("new cell not new");
        };
        r.remember(fp, Some(7));
        assert!(matches!(r.seen("2024-03-14"), Seen::Before(Some(7))));
        for other in ["2024-03-15", "2024-03-14 ", "2024-03-1", "2024-03-14\0"] {
            assert!(matches!(r.seen(other), Seen::New(_)), "{other:?}");
        }
        assert!(matches!(r.seen(&"x".repeat(200)), Seen::Untracked));
        // Distinct fingerprints for many distinct short cells.
        let mut set = std::collections::HashSet::new();
        for i in 0..100_000u32 {
            assert!(set.insert(fingerprint(i.to_string().as_bytes())));
        }
        for i in 0..=MAX_TRACKED as u32 {
            if let Seen::New(fp) = r.seen(&i.to_string()) {
                r.remember(fp, None);
            }
        }
        assert!(matches!(r.seen("2024-03-14"), Seen::Untracked));
    }
}
