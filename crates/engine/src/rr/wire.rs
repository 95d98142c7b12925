//! What rr puts on the wire: a 40-byte `dgram` header followed by the request or
//! block bytes, as one UDP datagram or one TCP message (TCP messages are delimited
//! by the header's `len`, the size of what follows the header).

use mtuperf_proto::dgram::{Header, Kind, HEADER_LEN};

pub use crate::config::bounds::{MAX_UDP_BLOCK, UDP_MAX_PAYLOAD};

/// Writes a request header into `buf` (at least 40 bytes).
pub fn request_header(buf: &mut [u8], client: u32, token: u64, seq: u64, stamp: u64, size: u32) {
    Header {
        kind: Kind::RrRequest,
        client,
        token,
        seq,
        stamp,
        aux: 0,
        len: size,
    }
    .write(buf);
}

/// Writes the response header for `req` into `buf`; `aux` carries the block checksum.
pub fn response_header(buf: &mut [u8], req: &Header, checksum: u32, block: u32) {
    Header {
        kind: Kind::RrResponse,
        aux: checksum,
        len: block,
        ..*req
    }
    .write(buf);
}

/// FNV-1a continued over `data` from state `h`: the same function as
/// `mtuperf_proto::dgram::checksum`, computed in pieces as TCP bytes arrive.
pub fn fnv_update(mut h: u32, data: &[u8]) -> u32 {
    for &b in data {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// Initial FNV-1a state.
pub const FNV_INIT: u32 = 0x811c_9dc5;

/// Flips one block byte after the header (the corrupt-response test hook); a second
/// call restores it.
pub fn flip(msg: &mut [u8]) {
    let at = HEADER_LEN + msg.len().saturating_sub(HEADER_LEN) / 2;
    if let Some(b) = msg.get_mut(at) {
        *b ^= 0x20;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mtuperf_proto::dgram::checksum;

    #[test]
    fn checksum_in_pieces_equals_the_whole() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let (a, b) = data.split_at(3333);
        assert_eq!(fnv_update(fnv_update(FNV_INIT, a), b), checksum(&data));
    }

    #[test]
    fn response_echoes_the_request_identity() {
        let mut buf = [0u8; 40];
        request_header(&mut buf, 3, 99, 17, 5, 128);
        let req = Header::read(&buf).unwrap();
        let mut out = [0u8; 40];
        response_header(&mut out, &req, 0xabcd, 8192);
        let resp = Header::read(&out).unwrap();
        assert_eq!(
            (
                resp.kind,
                resp.client,
                resp.token,
                resp.seq,
                resp.aux,
                resp.len
            ),
            (Kind::RrResponse, 3, 99, 17, 0xabcd, 8192)
        );
    }
}
