//! Test payload: incompressible bytes generated once per test and written again and
//! again, so no CPU is spent per write and no link compression can flatter a result.

/// `len` pseudo-random bytes from xorshift64* (fast, statistically flat, not secret).
pub fn incompressible(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        out.extend_from_slice(&x.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes());
    }
    out.truncate(len);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_has_no_repeats_and_full_byte_spread() {
        let p = incompressible(1 << 16, 42);
        assert_eq!(p.len(), 1 << 16);
        let mut hist = [0u32; 256];
        for b in &p {
            hist[*b as usize] += 1;
        }
        // Each byte value appears about 256 times; none is missing or dominant.
        assert!(hist.iter().all(|&c| (150..400).contains(&c)), "{hist:?}");
        assert_ne!(p[..4096], p[4096..8192]);
        assert_ne!(incompressible(64, 1), incompressible(64, 2));
    }
}
