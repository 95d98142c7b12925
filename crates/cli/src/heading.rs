//! The headings flags are grouped under in each command's help, shared so that the
//! same kind of flag sits under the same heading in every command.

/// What a test sends: sizes, length, direction.
pub const SEND: &str = "What to send";
/// How hard: parallel connections or clients, rates, threads, socket tuning.
pub const LOAD: &str = "Load";
/// Where the test runs: the interface to send from, CPUs on both ends.
pub const PLACEMENT: &str = "Placement";
/// What is printed and how.
pub const OUTPUT: &str = "Output";
/// What is stored (`--label`, `--db`, `--no-store`).
pub const HISTORY: &str = "History";
/// The agent's key (`--key-file`).
pub const AGENT: &str = "Agent";
/// `--ssh` and its options.
pub const SSH: &str = "Agents over SSH";
/// `stream --udp`'s own flags.
pub const UDP: &str = "UDP stream (--udp)";
/// What a command checks or measures when it is not a single test (mesh, doctor).
pub const TEST: &str = "What to test";
/// How path probes (path).
pub const PROBE: &str = "How to probe";
/// compare's and stream's repetitions.
pub const REPEAT: &str = "Repetitions";
/// Where and whom an agent serves (serve).
pub const LISTEN: &str = "Listening";
/// What an agent grants one test at most (serve).
pub const LIMITS: &str = "Limits";
/// An agent's continuous verification (serve --watch, --metrics).
pub const WATCH: &str = "Watch and metrics";
/// A cluster lab's shape (lab up).
pub const CLUSTER: &str = "Cluster (--scenario cluster)";
/// What every lab link does (lab up).
pub const LINKS: &str = "Links";
