//! `compare --placement`: one CPU placement for every repetition of every path, so
//! that a path's difference is not scheduling luck.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where a comparison pins the two ends of every repetition (rr, stream, UDP stream).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlacementPolicy {
    /// Not pinned: the kernel places the threads (placement is still recorded).
    #[default]
    Free,
    /// Client and agent test threads both on CPU 0.
    Same,
    /// Client test threads on CPU 0, the agent's on CPU 1 (the agent host needs two
    /// CPUs, and CPU 1 in its `serve --cpus`).
    Split,
}

impl PlacementPolicy {
    pub fn is_free(&self) -> bool {
        *self == PlacementPolicy::Free
    }

    pub fn name(self) -> &'static str {
        match self {
            PlacementPolicy::Free => "free",
            PlacementPolicy::Same => "same",
            PlacementPolicy::Split => "split",
        }
    }

    /// The CPUs of the client's and of the agent's test threads (None: not pinned).
    pub fn cpus(self) -> (Option<Vec<u32>>, Option<Vec<u32>>) {
        match self {
            PlacementPolicy::Free => (None, None),
            PlacementPolicy::Same => (Some(vec![0]), Some(vec![0])),
            PlacementPolicy::Split => (Some(vec![0]), Some(vec![1])),
        }
    }

    /// One sentence for the output: what every repetition ran with.
    pub fn describe(self) -> &'static str {
        match self {
            PlacementPolicy::Free => {
                "free: threads not pinned, placed by the kernel in each repetition (recorded, not fixed)"
            }
            PlacementPolicy::Same => {
                "same: every repetition of every path with client and agent test threads on CPU 0"
            }
            PlacementPolicy::Split => {
                "split: every repetition of every path with client test threads on CPU 0, the agent's on CPU 1"
            }
        }
    }
}
