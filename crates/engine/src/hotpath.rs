//! The per-block hot path's pieces, public for the criterion benchmarks
//! (`benches/per_block.rs`) only: what the rr requester and responder and the stream
//! receiver do for every block. Not an API.

pub use crate::payload::incompressible;
pub use crate::rr::hist::{new_histogram, record};
pub use crate::rr::wire::{fnv_update, request_header, response_header};
pub use crate::stream::data::coalesce_wait_ns;
