//! `cargo run -p mtuperf-schemas`: write every document's schema into `schemas/`.

fn main() -> std::process::ExitCode {
    let dir = mtuperf_schemas::schema_dir();
    match mtuperf_schemas::write_all(&dir) {
        Ok(n) => {
            println!("wrote {n} schemas to {}", dir.display());
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("mtuperf-schemas: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
