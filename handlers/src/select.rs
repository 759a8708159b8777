//! Which stores are buffered: a counter-based function, so the same choices can be made
//! by the device-side rewrite on a real GPU and replayed from a seed bit for bit.
//!
//! ```text
//! mix(x)  = SplitMix64's finalizer of x + 0x9E3779B97F4A7C15:
//!             z = x + 0x9E3779B97F4A7C15
//!             z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
//!             z = (z ^ (z >> 27)) * 0x94D049BB133111EB
//!             z ^ (z >> 31)                         (all arithmetic mod 2^64)
//! h       = mix(mix(mix(mix(seed) ^ launch) ^ thread) ^ n)
//! select  = (h >> 11) < threshold(p_w),  threshold(p) = round(p * 2^53) (p clamped to [0,1])
//! ```
//! where `launch` is the launch index on the device (0-based), `thread` the global linear
//! thread id (`cta * threads_per_cta + tid`), and `n` the number of global or shared stores
//! that thread executed earlier in the launch (0 for its first). `p_w = 1` selects every
//! store, `p_w = 0` none.

/// `mix`'s constants: the increment and the two multipliers (the device rewrite's inlined
/// selection, `rewrite::emit`, spells the same function in PTX from these).
pub const MIX_ADD: u64 = 0x9E37_79B9_7F4A_7C15;
pub const MIX_MUL1: u64 = 0xBF58_476D_1CE4_E5B9;
pub const MIX_MUL2: u64 = 0x94D0_49BB_1331_11EB;

#[inline]
pub fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(MIX_ADD);
    z = (z ^ (z >> 30)).wrapping_mul(MIX_MUL1);
    z = (z ^ (z >> 27)).wrapping_mul(MIX_MUL2);
    z ^ (z >> 31)
}

/// `round(p * 2^53)`, the comparison threshold for probability `p`.
pub fn threshold(p: f64) -> u64 {
    let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) };
    (p * (1u64 << 53) as f64).round() as u64
}

/// `mix(mix(seed) ^ launch)`: the part of the hash fixed for a launch (the host writes it
/// into the device runtime's control block, so a thread's header costs one `mix`).
#[inline]
pub fn launch_key(seed: u64, launch: u32) -> u64 {
    mix(mix(seed) ^ launch as u64)
}

/// `mix(mix(mix(seed) ^ launch) ^ thread)`: the part of the hash fixed for a thread in a
/// launch (the device runtime keeps it in the thread's header as `prefix`).
#[inline]
pub fn thread_prefix(seed: u64, launch: u32, thread: u32) -> u64 {
    mix(launch_key(seed, launch) ^ thread as u64)
}

/// Whether store number `n` of `thread` in `launch` is buffered.
#[inline]
pub fn selected(seed: u64, launch: u32, thread: u32, n: u64, threshold: u64) -> bool {
    selected_in(launch_key(seed, launch), thread, n, threshold)
}

/// [`selected`] with the launch's part of the hash ([`launch_key`]) computed once.
#[inline]
pub fn selected_in(launch_key: u64, thread: u32, n: u64, threshold: u64) -> bool {
    let h = mix(mix(launch_key ^ thread as u64) ^ n);
    (h >> 11) < threshold
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extremes_and_rate() {
        let all = threshold(1.0);
        let none = threshold(0.0);
        let half = threshold(0.5);
        let mut hits = 0;
        for n in 0..100_000u64 {
            assert!(selected(7, 0, 3, n, all));
            assert!(!selected(7, 0, 3, n, none));
            hits += selected(7, 1, 3, n, half) as u32;
        }
        // Binomial(100000, 0.5): 5 sigma is about 800.
        assert!((49_200..=50_800).contains(&hits), "{hits}");
    }

    #[test]
    fn the_launch_key_gives_the_same_choices() {
        for (seed, launch, thread) in [(0, 0, 0), (7, 3, 1025), (u64::MAX, 9, 77)] {
            let k = launch_key(seed, launch);
            for n in 0..64 {
                for p in [0.25, 0.5, 0.9] {
                    let t = threshold(p);
                    assert_eq!(
                        selected_in(k, thread, n, t),
                        (mix(thread_prefix(seed, launch, thread) ^ n) >> 11) < t
                    );
                }
            }
        }
    }

    #[test]
    fn pinned_values() {
        // The device-side rewrite must reproduce these exactly.
        assert_eq!(mix(0), 0xE220_A839_7B1D_CDAF);
        assert_eq!(
            (0..16)
                .filter(|n| selected(1, 2, 3, *n, threshold(0.5)))
                .count(),
            (0..16)
                .filter(|n| (mix(mix(mix(mix(1) ^ 2) ^ 3) ^ n) >> 11) < (1 << 52))
                .count()
        );
    }
}
