//! Argument groups that subcommands flatten into their own `Args`: each group turns its
//! flags into the engine's config for one kind of test, so a subcommand file keeps only
//! what is its own (target, repetitions, output).
pub mod compare;
pub mod mesh;
pub mod rr;
pub mod ssh;
pub mod stream;
pub mod stream_udp;
pub mod watch;
