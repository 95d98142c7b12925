//! The history on disk: concurrent handles, locks, corruption, schema.
//!
//! One test binary for these files (each a module): one link instead of one per file,
//! and their tests run side by side in one process.

mod history;
mod on_disk;
