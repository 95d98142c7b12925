//! mtuperf: measure and verify cluster interconnects (the command line is the
//! library's, `lib.rs`).
fn main() -> std::process::ExitCode {
    mtuperf::run(std::env::args_os().collect())
}
