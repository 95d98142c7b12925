//! The committed `schemas/*.schema.json` are what the Rust types generate.

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
