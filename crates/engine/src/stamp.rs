//! Who we are and when: the software identity, fresh random bytes for nonces and
//! tokens, and wall-clock timestamps for people.

/// Software identity sent in handshakes and stored with results.
pub const SOFTWARE: &str = concat!("mtuperf ", env!("CARGO_PKG_VERSION"));

/// Fresh random bytes (nonces, cookies, tokens).
pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    // getrandom only fails when the OS has no entropy source at all; fall back to
    // the clock rather than abort (nonces stay unique, which is what they need).
    if getrandom::fill(&mut b).is_err() {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
            .to_le_bytes();
        for (i, x) in b.iter_mut().enumerate() {
            *x = t.get(i % t.len()).copied().unwrap_or(0) ^ (i as u8);
        }
    }
    b
}

/// Wall-clock milliseconds since the epoch, for timestamps shown to people.
pub fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
