//! The JSON Schemas of mtuperf's documents, generated from the Rust types that
//! serialise them (`schemars`), so a schema never drifts from what the tool prints.
//!
//! `cargo run -p mtuperf-schemas` writes them into the repository's `schemas/`
//! directory; the test `committed_schemas_are_generated_from_the_types` fails when a
//! committed file differs from what the types generate. Each schema describes what mtuperf *writes* (the serialize
//! contract): every field it prints is required, an absent value is `null`, and an
//! object has no properties beyond its type's fields.

mod close;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::Value;

/// The command that regenerates every schema file.
pub const REGENERATE: &str = "cargo run -p mtuperf-schemas";

/// One document: its schema file and the schema generated from its type.
pub struct Generated {
    /// The file name under `schemas/`.
    pub file: &'static str,
    /// The document's schema, with its `schema` field's value as title.
    pub schema: Value,
}

/// Every document mtuperf prints or stores, in the order of `schemas/`.
pub fn documents() -> Vec<Generated> {
    use mtuperf_report as r;
    vec![
        doc::<r::compare::CompareDoc>("compare.schema.json", r::compare::SCHEMA),
        doc::<r::doctor::Document>("doctor.schema.json", r::doctor::SCHEMA),
        doc::<r::error::ErrorDoc>("error.schema.json", r::error::SCHEMA),
        doc::<r::csv::ExportDoc>("export.schema.json", r::csv::EXPORT_SCHEMA),
        doc::<r::history::Rows>("history.schema.json", r::history::SCHEMA),
        doc::<mtuperf_lab::ServeReport>("lab-serve.schema.json", mtuperf_lab::SERVE_SCHEMA),
        doc::<mtuperf_lab::LabStatus>("lab-status.schema.json", mtuperf_lab::STATUS_SCHEMA),
        doc::<r::mesh::Document>("mesh.schema.json", r::mesh::SCHEMA),
        doc::<r::path::Document>("path.schema.json", r::path::SCHEMA),
        doc::<r::rr::Document>("rr.schema.json", r::rr::SCHEMA),
        doc::<r::stream::udp::Document>("stream-udp.schema.json", r::stream::udp::SCHEMA),
        doc::<r::stream::Document>("stream.schema.json", r::stream::SCHEMA),
    ]
}

fn doc<T: JsonSchema>(file: &'static str, title: &str) -> Generated {
    let generator = SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    close::close_objects(&mut schema);
    if let Some(obj) = schema.as_object_mut() {
        obj.insert(
            "$id".into(),
            format!("https://mtuperf.dev/schemas/{file}").into(),
        );
        obj.insert("title".into(), title.into());
    }
    Generated { file, schema }
}

/// The text of a schema file: pretty JSON, `$schema`, `$id`, `title` and
/// `description` first and `$defs` last (a reader looks for them there), and a final
/// newline.
pub fn render(schema: &Value) -> String {
    const HEAD: [&str; 4] = ["$schema", "$id", "title", "description"];
    let Some(obj) = schema.as_object() else {
        return format!("{}\n", pretty(schema));
    };
    let rank = |k: &str| {
        HEAD.iter()
            .position(|h| *h == k)
            .unwrap_or(if k == "$defs" {
                HEAD.len() + 1
            } else {
                HEAD.len()
            })
    };
    let mut keys: Vec<&String> = obj.keys().collect();
    keys.sort_by_key(|k| rank(k));
    let fields: Vec<String> = keys
        .iter()
        .map(|k| {
            let value = pretty(&obj[k.as_str()]).replace('\n', "\n  ");
            format!("  {}: {value}", Value::from(k.as_str()))
        })
        .collect();
    format!("{{\n{}\n}}\n", fields.join(",\n"))
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// The repository's `schemas/` directory.
pub fn schema_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas");
    dir.canonicalize().unwrap_or(dir)
}

/// Write every schema into `dir`; how many were written.
pub fn write_all(dir: &Path) -> std::io::Result<usize> {
    let docs = documents();
    for d in &docs {
        let path = dir.join(d.file);
        std::fs::write(&path, render(&d.schema)).map_err(|e| {
            std::io::Error::new(e.kind(), format!("writing {}: {e}", path.display()))
        })?;
    }
    Ok(docs.len())
}

/// The schema files in `dir` that differ from what the types generate (or are
/// missing), and the `*.schema.json` files no type generates.
pub fn stale(dir: &Path) -> Vec<String> {
    let docs = documents();
    let mut out: Vec<String> = docs
        .iter()
        .filter(|d| std::fs::read_to_string(dir.join(d.file)).ok() != Some(render(&d.schema)))
        .map(|d| d.file.to_string())
        .collect();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".schema.json") && !docs.iter().any(|d| d.file == name) {
                out.push(format!("{name} (no type generates it)"));
            }
        }
    }
    out
}
