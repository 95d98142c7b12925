//! Binary headers of UDP datagrams (rr requests/responses, path probes/acks, UDP
//! stream data).
//!
//! Fixed 40-byte layout, big endian, written into and read from caller-owned buffers
//! so the hot path never allocates:
//!
//! ```text
//! 0  magic u16 (0x6d74 "mt")   2 version u8   3 kind u8
//! 4  client u32                8 token u64
//! 16 seq u64                   24 stamp u64 (sender's clock, ns)
//! 32 aux u32 (kind-specific)   36 len u32 (intended datagram length)
//! 40 payload
//! ```

pub const MAGIC: u16 = 0x6d74;
pub const VERSION: u8 = 1;
pub const HEADER_LEN: usize = 40;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    RrRequest = 1,
    RrResponse = 2,
    PathProbe = 3,
    PathAck = 4,
    /// A datagram of a UDP stream (`aux`: the index, `len`: the block).
    StreamData = 5,
}

impl Kind {
    fn from_u8(v: u8) -> Option<Kind> {
        Some(match v {
            1 => Kind::RrRequest,
            2 => Kind::RrResponse,
            3 => Kind::PathProbe,
            4 => Kind::PathAck,
            5 => Kind::StreamData,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub kind: Kind,
    pub client: u32,
    pub token: u64,
    pub seq: u64,
    pub stamp: u64,
    pub aux: u32,
    pub len: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DgramError {
    #[error("datagram shorter than its header")]
    Short,
    #[error("not an mtuperf datagram")]
    Magic,
    #[error("datagram version {0} not supported")]
    Version(u8),
    #[error("unknown datagram kind {0}")]
    Kind(u8),
}

fn get<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    let mut a = [0u8; N];
    if let Some(s) = b.get(at..at + N) {
        a.copy_from_slice(s);
    }
    a
}

impl Header {
    /// Writes the header into the first 40 bytes of `buf`; false if `buf` is shorter.
    pub fn write(&self, buf: &mut [u8]) -> bool {
        let Some(out) = buf.get_mut(..HEADER_LEN) else {
            return false;
        };
        let mut h = [0u8; HEADER_LEN];
        h[0..2].copy_from_slice(&MAGIC.to_be_bytes());
        h[2] = VERSION;
        h[3] = self.kind as u8;
        h[4..8].copy_from_slice(&self.client.to_be_bytes());
        h[8..16].copy_from_slice(&self.token.to_be_bytes());
        h[16..24].copy_from_slice(&self.seq.to_be_bytes());
        h[24..32].copy_from_slice(&self.stamp.to_be_bytes());
        h[32..36].copy_from_slice(&self.aux.to_be_bytes());
        h[36..40].copy_from_slice(&self.len.to_be_bytes());
        out.copy_from_slice(&h);
        true
    }

    pub fn read(buf: &[u8]) -> Result<Header, DgramError> {
        if buf.len() < HEADER_LEN {
            return Err(DgramError::Short);
        }
        if u16::from_be_bytes(get(buf, 0)) != MAGIC {
            return Err(DgramError::Magic);
        }
        let [version] = get::<1>(buf, 2);
        if version != VERSION {
            return Err(DgramError::Version(version));
        }
        let [k] = get::<1>(buf, 3);
        let kind = Kind::from_u8(k).ok_or(DgramError::Kind(k))?;
        Ok(Header {
            kind,
            client: u32::from_be_bytes(get(buf, 4)),
            token: u64::from_be_bytes(get(buf, 8)),
            seq: u64::from_be_bytes(get(buf, 16)),
            stamp: u64::from_be_bytes(get(buf, 24)),
            aux: u32::from_be_bytes(get(buf, 32)),
            len: u32::from_be_bytes(get(buf, 36)),
        })
    }
}

/// FNV-1a over a payload: cheap enough to run on every block with `--verify`, and
/// catches the flipped bits a broken checksum offload lets through.
pub fn checksum(data: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for &b in data {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_rejections() {
        let h = Header {
            kind: Kind::RrResponse,
            client: 7,
            token: 0xdead_beef,
            seq: 42,
            stamp: 123_456,
            aux: 9,
            len: 8192,
        };
        let mut buf = [0u8; 64];
        assert!(h.write(&mut buf));
        assert_eq!(Header::read(&buf).unwrap(), h);
        assert_eq!(Header::read(&buf[..39]), Err(DgramError::Short));
        let mut bad = buf;
        bad[0] = 0;
        assert_eq!(Header::read(&bad), Err(DgramError::Magic));
        let mut bad = buf;
        bad[2] = 9;
        assert_eq!(Header::read(&bad), Err(DgramError::Version(9)));
        let mut bad = buf;
        bad[3] = 99;
        assert_eq!(Header::read(&bad), Err(DgramError::Kind(99)));
        assert!(!h.write(&mut [0u8; 10]));
    }

    #[test]
    fn checksum_detects_a_flipped_bit() {
        let a = vec![0x5au8; 8192];
        let mut b = a.clone();
        b[4000] ^= 0x10;
        assert_ne!(checksum(&a), checksum(&b));
        assert_eq!(checksum(b""), 0x811c_9dc5);
    }
}
