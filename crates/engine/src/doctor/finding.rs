//! A small builder so each rule reads as: id, subject, status, values, reason, source, fix.

use super::{Finding, Status};

/// Builds one [`Finding`]; unset text fields stay empty.
#[derive(Debug, Clone)]
pub struct FindingBuilder(Finding);

impl FindingBuilder {
    pub fn new(id: &str, subject: &str) -> FindingBuilder {
        FindingBuilder(Finding {
            id: id.into(),
            subject: subject.into(),
            status: Status::Pass,
            measured: String::new(),
            expected: String::new(),
            why: String::new(),
            source: String::new(),
            fix: String::new(),
        })
    }

    #[must_use]
    pub fn status(mut self, s: Status) -> Self {
        self.0.status = s;
        self
    }

    #[must_use]
    pub fn measured(mut self, s: impl Into<String>) -> Self {
        self.0.measured = s.into();
        self
    }

    #[must_use]
    pub fn expected(mut self, s: impl Into<String>) -> Self {
        self.0.expected = s.into();
        self
    }

    #[must_use]
    pub fn why(mut self, s: impl Into<String>) -> Self {
        self.0.why = s.into();
        self
    }

    #[must_use]
    pub fn source(mut self, s: impl Into<String>) -> Self {
        self.0.source = s.into();
        self
    }

    /// The fix, kept only when the finding is not a PASS or SKIP.
    #[must_use]
    pub fn fix(mut self, s: impl Into<String>) -> Self {
        self.0.fix = s.into();
        self
    }

    pub fn build(mut self) -> Finding {
        if matches!(self.0.status, Status::Pass | Status::Skip) {
            self.0.fix.clear();
        }
        self.0
    }
}

/// The fix for a sysctl: the runtime command plus the line that makes it persistent.
pub fn sysctl_fix(name: &str, value: &str) -> String {
    let arg = if value.contains(' ') {
        format!("{name}='{value}'")
    } else {
        format!("{name}={value}")
    };
    format!("sysctl -w {arg} && echo '{name} = {value}' >> /etc/sysctl.d/90-mtuperf-doctor.conf")
}

/// A SKIP finding saying why a check could not run.
pub fn skip(id: &str, subject: &str, reason: impl Into<String>) -> Finding {
    skip_with(id, subject, "unknown", reason)
}

/// A SKIP finding that still shows what was read.
pub fn skip_with(id: &str, subject: &str, measured: &str, reason: impl Into<String>) -> Finding {
    FindingBuilder::new(id, subject)
        .status(Status::Skip)
        .measured(measured)
        .why(reason)
        .build()
}
