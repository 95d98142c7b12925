//! What a measurement kind's agent side is written against, below both the agent and
//! the kinds: the narrow context a handler gets from its session ([`ServeCtx`]), the
//! handler trait ([`AgentHandler`]) and the table the session dispatches through
//! ([`Handlers`]). The agent implements the context and registers the kinds'
//! handlers in one place (`agent::handlers`); a kind imports only this module, never
//! the agent.

mod ctx;
mod handlers;
mod level;
pub mod phase;

pub use ctx::{wire_name, ServeCtx};
pub use handlers::{unexpected, AgentHandler, Handlers, Route};
pub use level::LogLevel;
