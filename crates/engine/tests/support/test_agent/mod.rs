//! The one test agent of the engine's test binaries: the engine's own `Agent`,
//! in-process, bound as configured (on 127.0.0.1, port 0, unless the test says
//! otherwise) and run on a thread until its `Shutdown` is set.
#![allow(dead_code)]

use std::net::SocketAddr;

use mtuperf_engine::agent::{Agent, AgentConfig};
use mtuperf_engine::Shutdown;

/// An agent's default configuration on 127.0.0.1, port 0.
pub fn config() -> AgentConfig {
    AgentConfig::new(vec![SocketAddr::from(([127, 0, 0, 1], 0))])
}

/// Binds `config` and serves it on a thread: its address, and its shutdown.
pub fn start(config: AgentConfig) -> (SocketAddr, Shutdown) {
    let agent = Agent::bind(config).expect("bind the test agent");
    let addr = agent.local_addrs()[0];
    let stop = Shutdown::new();
    let s = stop.clone();
    std::thread::spawn(move || agent.run(&s));
    (addr, stop)
}
