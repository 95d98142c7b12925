//! 4096 rr clients against one in-process agent, in a process of their own: the test
//! counts this process's descriptors and threads before and after, which any other
//! test running beside it would change.

#[path = "../support/test_agent/mod.rs"]
mod test_agent;

mod rr_scale;
