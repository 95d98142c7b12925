//! Errors of the lab: each carries what was being done and with what.
use std::path::PathBuf;

/// A lab failure. [`LabError::is_environment`] and [`LabError::is_usage`] tell the
/// CLI which exit code to use.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    #[error(
        "the lab needs CAP_NET_ADMIN and CAP_SYS_ADMIN to build and enter its network \
         namespaces ({missing} missing); run it as root: sudo {command}"
    )]
    NoPrivilege {
        missing: &'static str,
        /// The command that was run, as the user can run it again under sudo
        /// ("mtuperf lab down --name rac"); [`LabError::for_command`] sets it.
        command: String,
    },
    #[error("`{tool}` was not found in PATH: install the Debian package {package} (apt-get install {package})")]
    MissingTool {
        tool: &'static str,
        package: &'static str,
    },
    #[error("{}", missing_tools_text(tools))]
    MissingTools {
        /// (tool, Debian package), every one missing.
        tools: Vec<(&'static str, &'static str)>,
    },
    #[error("`{line}` failed: {source}")]
    Kernel {
        /// The iproute2/ethtool/sysctl command line doing the same.
        line: String,
        source: std::io::Error,
    },
    #[error("invalid {what} {value:?}: allowed {allowed}")]
    Invalid {
        what: String,
        value: String,
        allowed: String,
    },
    #[error("invalid value {value:?} for {flag}: allowed {allowed}; {hint}")]
    BadFlag {
        flag: &'static str,
        value: String,
        allowed: String,
        hint: String,
    },
    #[error("lab {name:?} already exists; remove it first with: mtuperf lab down --name {name}")]
    Exists { name: String },
    #[error("no lab named {name:?}; build it with: mtuperf lab up --name {name}")]
    NotFound { name: String },
    #[error("`{line}` failed ({status}): {stderr}")]
    Command {
        line: String,
        status: String,
        stderr: String,
    },
    #[error("cannot run `{line}`")]
    Spawn {
        line: String,
        #[source]
        source: std::io::Error,
    },
    #[error("lab state {}", path.display())]
    State {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("lab state {} is not valid", path.display())]
    StateFormat {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("agent on lab host {host}: {detail}")]
    Agent { host: String, detail: String },
}

impl LabError {
    /// Missing privilege or tool: the machine, not the request, is at fault.
    pub fn is_environment(&self) -> bool {
        matches!(
            self,
            LabError::NoPrivilege { .. }
                | LabError::MissingTool { .. }
                | LabError::MissingTools { .. }
        )
    }

    /// The same error, naming `command` (the command line as it was run, e.g. from
    /// [`crate::shell_line`]) as what to run again as root.
    #[must_use]
    pub fn for_command(self, command: String) -> LabError {
        match self {
            LabError::NoPrivilege { missing, .. } => LabError::NoPrivilege { missing, command },
            other => other,
        }
    }

    /// A bad name, host or option value given by the user.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            LabError::Invalid { .. }
                | LabError::BadFlag { .. }
                | LabError::Exists { .. }
                | LabError::NotFound { .. }
        )
    }
}

fn missing_tools_text(tools: &[(&str, &str)]) -> String {
    let names: Vec<String> = tools.iter().map(|(t, _)| format!("`{t}`")).collect();
    let mut packages: Vec<&str> = tools.iter().map(|(_, p)| *p).collect();
    packages.sort_unstable();
    packages.dedup();
    format!(
        "{} not found in PATH: install the Debian packages (apt-get install {})",
        names.join(", "),
        packages.join(" ")
    )
}
