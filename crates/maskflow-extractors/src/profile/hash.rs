//! Cheap 64-bit hashes for the profile: values and rows are counted by
//! hash, so no raw value is kept and no string is allocated per cell.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use crate::mask::mask_char;

/// A set of hashes, hashed no further.
pub(super) type Hashes = HashSet<u64, BuildHasherDefault<Identity>>;

/// Passes a 64-bit hash through (the keys are hashes already).
#[derive(Default)]
pub(super) struct Identity(u64);

impl Hasher for Identity {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0 = fnv(bytes);
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a of `bytes`, finished with a multiply-xorshift so the low bits
/// (which the set's buckets use) mix well.
pub(super) fn fnv(bytes: &[u8]) -> u64 {
    let mut h = OFFSET;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(PRIME);
    }
    mix(h)
}

/// Mixes `h` (a finaliser, as in splitmix64).
pub(super) fn mix(mut h: u64) -> u64 {
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// The hash of the masked shape of the first `chars` characters of `v`,
/// and whether `v` is longer, without building the shape.
pub(super) fn mask_hash(v: &str, chars: usize) -> (u64, bool) {
    let mut h = OFFSET;
    let mut n = 0;
    let mut long = false;
    if v.is_ascii() {
        for &b in v.as_bytes() {
            if n == chars {
                long = true;
                break;
            }
            let m = match b {
                b'A'..=b'Z' => b'A',
                b'a'..=b'z' => b'a',
                b'0'..=b'9' => b'#',
                _ => b,
            };
            h = (h ^ u64::from(m)).wrapping_mul(PRIME);
            n += 1;
        }
    } else {
        for c in v.chars() {
            if n == chars {
                long = true;
                break;
            }
            h = (h ^ u64::from(u32::from(mask_char(c)))).wrapping_mul(PRIME);
            n += 1;
        }
    }
    if long {
        h = (h ^ 0xff).wrapping_mul(PRIME);
    }
    (mix(h), long)
}
