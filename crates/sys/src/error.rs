//! The crate's error type: each variant names the operation and its subject.

use std::io;
use std::net::IpAddr;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file under /proc or /sys could not be read.
    #[error("cannot read {}", path.display())]
    Read { path: PathBuf, source: io::Error },
    /// A kernel file was read but its content was not what we expected.
    #[error("cannot parse {}: {what}", path.display())]
    Parse { path: PathBuf, what: String },
    /// A netlink request failed (socket, send, receive, or an error reply).
    #[error("netlink {op} for {subject} failed")]
    Netlink {
        op: &'static str,
        subject: String,
        source: io::Error,
    },
    /// The kernel answered a route request but the reply had no output interface.
    #[error("no route to {dst}")]
    NoRoute { dst: IpAddr },
    /// A system call about a named subject failed (e.g. an ioctl on an interface).
    #[error("{op} on {subject} failed")]
    Sys {
        op: &'static str,
        subject: String,
        source: io::Error,
    },
}

impl Error {
    pub(crate) fn read(path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Read {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn parse(path: impl Into<PathBuf>, what: impl Into<String>) -> Self {
        Error::Parse {
            path: path.into(),
            what: what.into(),
        }
    }
}
