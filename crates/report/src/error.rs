//! The `mtuperf.error/1` document: a failure, for a command asked for JSON.
use schemars::JsonSchema;
use serde::Serialize;

/// The `schema` of an error document.
pub const SCHEMA: &str = "mtuperf.error/1";

/// What a command asked for JSON (`--json` or `--format json`) prints on stdout when it
/// fails; the same message goes to stderr, and the process exits with `exit`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ErrorDoc {
    #[schemars(extend("const" = SCHEMA))]
    pub schema: &'static str,
    /// The whole error chain on one line.
    pub error: String,
    /// The exit code (README, Exit codes).
    #[schemars(range(min = 1))]
    pub exit: u8,
}

impl ErrorDoc {
    pub fn new(error: String, exit: u8) -> ErrorDoc {
        ErrorDoc {
            schema: SCHEMA,
            error,
            exit,
        }
    }

    /// The document as compact JSON.
    pub fn json(&self) -> String {
        // Two strings and a number always serialize.
        serde_json::to_string(self).unwrap_or_default()
    }
}
