//! What limited one direction of a stream, as a name (the verdict carries its
//! evidence, `advice` its fixes; both read it from here).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LimitCause {
    Cpu,
    ReceiveWindow,
    SendBuffer,
    Network,
    Application,
    /// The receive window was full, though it holds what the path needs: the
    /// receiver did not read in time (its application, its scheduling), and no CPU
    /// was saturated.
    Receiver,
    /// The kernel does not report the limit clocks and no CPU was saturated.
    Unknown,
}
