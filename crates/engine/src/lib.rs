//! The mtuperf measurement engine: the agent (`agent`), the client side of a session
//! (`client`), and the tests (`stream`, ...). No terminal, colour or CLI dependencies:
//! callers get typed results and progress through observer callbacks.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod agent;
pub mod client;
pub mod compare;
pub mod config;
pub mod control;
pub mod cpu_res;
pub mod diagnosis;
pub mod doctor;
pub mod error;
pub mod explain;
pub mod flow;
#[doc(hidden)]
pub mod hotpath;
pub mod kind;
pub mod mesh;
pub mod metrics;
pub mod node_failure;
pub mod path;
pub mod payload;
pub mod placement;
pub mod rr;
pub mod said;
pub mod sampler;
pub mod serve;
pub mod shutdown;
mod sniff;
pub mod ssh;
pub mod stall;
pub mod stamp;
pub mod stream;
mod tick;
pub mod watch;

pub use error::EngineError;
pub use mtuperf_proto::interrupt::Interrupt;
pub use shutdown::Shutdown;
pub use stamp::{random_bytes, unix_ms, SOFTWARE};
