//! Progress callbacks of an rr run, shared by the client (which reports to them) and
//! the requester's ticker (which samples for them); their own module so neither
//! imports the other.

use std::net::SocketAddr;

use mtuperf_proto::msg::RrReady;

use super::RrInterval;

/// Progress callbacks.
pub trait RrObserver: Sync {
    fn ready(&self, _ready: &RrReady) {}
    fn interval(&self, _sample: &RrInterval) {}
    /// `--bidir`: the client's responder is serving at `addr` (before Go).
    fn responder(&self, _addr: SocketAddr) {}
    /// Something the user should know before reading the result (e.g. the
    /// `--bidir` responder's socket could not get the receive buffer its clients need).
    fn warning(&self, _what: &str) {}
}

/// An observer that ignores everything.
pub struct Quiet;
impl RrObserver for Quiet {}
