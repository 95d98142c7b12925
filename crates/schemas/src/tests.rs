//! The committed `schemas/*.schema.json` are what the Rust types generate.

use crate as mtuperf_schemas;

#[test]
fn committed_schemas_are_generated_from_the_types() {
    let stale = mtuperf_schemas::stale(&mtuperf_schemas::schema_dir());
    assert!(
        stale.is_empty(),
        "schemas/ differs from the Rust types in: {}\nregenerate them with `{}` and commit the result",
        stale.join(", "),
        mtuperf_schemas::REGENERATE
    );
}

#[test]
fn every_document_names_its_schema_as_a_constant() {
    for d in mtuperf_schemas::documents() {
        let title = d.schema["title"].as_str().unwrap_or_default().to_string();
        assert!(title.starts_with("mtuperf."), "{}: title {title}", d.file);
        let text = mtuperf_schemas::render(&d.schema);
        assert!(
            text.contains(&format!("\"const\": \"{title}\"")),
            "{}: no `schema` field fixed to {title}",
            d.file
        );
    }
}

/// The report's fixtures (real runs, written by this build's types) validate against
/// the generated schemas; a document of the previous version does not.
#[test]
fn real_documents_validate_and_an_older_version_does_not() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/fixtures");
    let docs = mtuperf_schemas::documents();
    let check = |fixture: &str, file: &str| -> Vec<String> {
        let text = std::fs::read_to_string(dir.join(fixture)).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        let schema = &docs.iter().find(|d| d.file == file).unwrap().schema;
        let validator = jsonschema::validator_for(schema).unwrap();
        validator
            .iter_errors(&doc)
            .map(|e| format!("{fixture}: {e} at {}", e.instance_path))
            .collect()
    };
    for (fixture, file) in [
        ("rr_step_loopback.json", "rr.schema.json"),
        ("stream_dead_path.json", "stream.schema.json"),
        ("path_agent_mismatch.json", "path.schema.json"),
    ] {
        let errors = check(fixture, file);
        assert!(errors.is_empty(), "{errors:#?}");
    }
    assert!(!check("path_agent_v1_before_slack.json", "path.schema.json").is_empty());
}
