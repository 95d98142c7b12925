//! Live output while a test runs: the engine's observers that print per-interval lines
//! or keep a status line on a terminal (stderr), one file per kind of test.
pub mod mesh;
pub mod path;
pub mod rr;
pub mod stream;
pub mod stream_udp;
