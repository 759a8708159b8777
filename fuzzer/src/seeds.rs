//! Execution seeds: every execution of a campaign has a numeric id, and its seed is drawn
//! from the campaign's master seed with ChaCha20: `ChaCha20Rng::seed_from_u64(master)`,
//! stream `id`, first `u64`. Changing the plan (runs, p values) changes ids, never how an
//! id maps to a seed.

use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};

pub fn exec_seed(master: u64, id: u64) -> u64 {
    let mut rng = ChaCha20Rng::seed_from_u64(master);
    rng.set_stream(id);
    rng.next_u64()
}

#[cfg(test)]
mod tests {
    #[test]
    fn distinct_and_stable() {
        let a: Vec<u64> = (0..100).map(|i| super::exec_seed(1, i)).collect();
        let mut b = a.clone();
        b.sort();
        b.dedup();
        assert_eq!(b.len(), 100);
        assert_eq!(super::exec_seed(1, 5), a[5]);
        assert_ne!(super::exec_seed(2, 5), a[5]);
    }
}
