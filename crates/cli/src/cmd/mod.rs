//! One file per subcommand: parse → validate → call the engine → render.
pub mod compare;
pub mod completions;
pub mod demo;
pub mod doctor;
pub mod export;
pub mod history;
pub mod keygen;
pub mod lab;
pub mod man;
pub mod mesh;
pub mod path;
pub mod report;
pub mod rr;
pub mod serve;
pub mod show;
pub mod stream;
