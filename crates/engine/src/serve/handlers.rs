//! The agent's table of test handlers: each takes one request message and serves it
//! on the session's control connection. The session looks a message up here and
//! refuses, by the message's name, what no handler takes.

use mtuperf_proto::msg::ClientMsg;

use super::ServeCtx;
use crate::EngineError;

/// One kind's agent side: the request message it takes, and how it serves it.
pub trait AgentHandler: Send + Sync + 'static {
    type Request;
    /// A test holds the agent (counted, gated against its watch checks, its
    /// connections released when it ends); a query (discovery, counters) does not.
    const TEST: bool = true;
    /// The handler's request, when `msg` is it.
    fn request(msg: &ClientMsg) -> Option<&Self::Request>;
    /// Serves one request: refusals go to the client as refusals (Ok); an Err ends
    /// the test with the error sent to the client.
    fn serve(&self, ctx: &dyn ServeCtx, req: &Self::Request) -> Result<(), EngineError>;
}

/// A registered handler, its request type erased (what [`Handlers::find`] returns).
pub trait Route: Send + Sync {
    /// Whether this handler takes `msg`.
    fn takes(&self, msg: &ClientMsg) -> bool;
    /// [`AgentHandler::TEST`].
    fn is_test(&self) -> bool;
    /// Serves `msg`; a message it does not take is refused by name.
    fn serve(&self, ctx: &dyn ServeCtx, msg: &ClientMsg) -> Result<(), EngineError>;
}

struct Erased<H>(H);

impl<H: AgentHandler> Route for Erased<H> {
    fn takes(&self, msg: &ClientMsg) -> bool {
        H::request(msg).is_some()
    }

    fn is_test(&self) -> bool {
        H::TEST
    }

    fn serve(&self, ctx: &dyn ServeCtx, msg: &ClientMsg) -> Result<(), EngineError> {
        match H::request(msg) {
            Some(req) => self.0.serve(ctx, req),
            None => ctx.refuse_bad(unexpected(msg)),
        }
    }
}

/// Why a message no handler takes is refused: "unexpected message go".
pub fn unexpected(msg: &ClientMsg) -> String {
    format!("unexpected message {}", msg.name())
}

/// The handlers a session dispatches through; the first that takes a message serves it.
#[derive(Default)]
pub struct Handlers {
    routes: Vec<Box<dyn Route>>,
}

impl Handlers {
    /// Adds `handler`.
    #[must_use]
    pub fn with<H: AgentHandler>(mut self, handler: H) -> Handlers {
        self.routes.push(Box::new(Erased(handler)));
        self
    }

    /// The handler that takes `msg`, if one is registered.
    pub fn find(&self, msg: &ClientMsg) -> Option<&dyn Route> {
        self.routes.iter().find(|r| r.takes(msg)).map(AsRef::as_ref)
    }

    /// How many handlers take `msg` (1 for every request of a well-formed table).
    pub fn takers(&self, msg: &ClientMsg) -> usize {
        self.routes.iter().filter(|r| r.takes(msg)).count()
    }
}
