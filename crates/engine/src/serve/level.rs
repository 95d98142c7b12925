//! How much an agent log line matters (below the agent and the kinds, which both log).

/// How much a log line matters: its JSON spelling and its text word are "info" and
/// "warn". Warnings are rate-limited per event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    Info,
    Warn,
}

impl LogLevel {
    pub const ALL: [LogLevel; 2] = [LogLevel::Info, LogLevel::Warn];

    /// The word a log line starts with, and its JSON value.
    pub fn name(self) -> &'static str {
        match self {
            LogLevel::Info => "info",
            LogLevel::Warn => "warn",
        }
    }
}

impl std::fmt::Display for LogLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for LogLevel {
    type Err = String;

    fn from_str(s: &str) -> Result<LogLevel, String> {
        LogLevel::ALL
            .into_iter()
            .find(|l| l.name() == s)
            .ok_or_else(|| format!("unknown log level {s:?}; one of info, warn"))
    }
}
