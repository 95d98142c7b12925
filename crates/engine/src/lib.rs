//! The mtuperf measurement engine: the agent (`agent`), the client side of a session
//! (`client`), and the tests (`stream`, ...). No terminal, colour or CLI dependencies:
//! callers get typed results and progress through observer callbacks.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod agent;
pub mod client;
pub mod compare;
pub mod config;
pub mod control;
pub mod doctor;
pub mod error;
pub mod flow;
pub mod mesh;
pub mod path;
pub mod payload;
pub mod rr;
pub mod sampler;
mod sniff;
pub mod stall;
pub mod stream;
mod tick;

pub use error::EngineError;

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
