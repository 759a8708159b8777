//! One fast hasher for the simulator's small integer keys (addresses, block keys, page
//! numbers, barrier ids): one 64×64→128-bit multiply per word, folded. std's SipHash
//! dominated the write buffers' store and load paths; the keys are not attacker-chosen.
//! The fold keeps the low bits (hashbrown's bucket index) well mixed even for aligned
//! addresses, whose low bits are all zero.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(*b as u64);
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.write_u64(i as u64);
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        let m = ((self.0 ^ i) as u128).wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835);
        self.0 = (m as u64) ^ ((m >> 64) as u64);
    }
}

pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;
pub type FastSet<K> = HashSet<K, BuildHasherDefault<FastHasher>>;
