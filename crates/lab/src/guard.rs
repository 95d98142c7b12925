//! Labs for tests: unique names, removal on drop.
use std::sync::atomic::{AtomicU32, Ordering};

use crate::error::LabError;
use crate::options::LabOptions;
use crate::state::Lab;

/// A lab name unique to this process and call ("t<pid>-<counter>"), for tests that
/// run in parallel.
pub fn unique_name() -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    format!(
        "t{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// For tests: a lab removed on drop, even when the test panics.
#[derive(Debug)]
pub struct LabGuard(pub Lab);

impl LabGuard {
    /// Builds a lab from `opts` under a [`unique_name`] (the name in `opts` is ignored).
    pub fn up(mut opts: LabOptions) -> Result<LabGuard, LabError> {
        opts.name = unique_name();
        Lab::up(&opts).map(LabGuard)
    }
}

impl std::ops::Deref for LabGuard {
    type Target = Lab;
    fn deref(&self) -> &Lab {
        &self.0
    }
}

impl std::ops::DerefMut for LabGuard {
    fn deref_mut(&mut self) -> &mut Lab {
        &mut self.0
    }
}

impl Drop for LabGuard {
    fn drop(&mut self) {
        let _ = Lab::down(&self.0.name, false);
    }
}
