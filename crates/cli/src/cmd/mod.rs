//! One file per subcommand: parse → validate → call the engine → render.
pub mod compare;
pub mod completions;
pub mod demo;
pub mod doctor;
pub mod export;
pub mod export_metrics;
pub mod history;
pub mod keygen;
pub mod lab;
pub mod man;
pub mod path;
pub mod report;
pub mod rr;
pub mod serve;
pub mod serve_watch;
pub mod show;
pub mod stream;
