//! Objects closed to properties their type does not have.
//!
//! A derived `Serialize` writes exactly its fields, so in the serialize contract every
//! object of a document is closed: `additionalProperties: false` (or
//! `unevaluatedProperties: false` where its properties are spread over subschemas),
//! as the hand-written schemas had it. The exception is a schema that describes only
//! *part* of an object: the variants of an enum flattened into a struct (`oneOf`
//! beside the struct's own `properties`) and a `$ref` beside `properties` (a newtype
//! variant of an internally tagged enum). Those are left open, and the object they
//! belong to is closed with `unevaluatedProperties`, which sees the properties its
//! subschemas evaluated.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

const APPLICATORS: [&str; 3] = ["allOf", "anyOf", "oneOf"];
const DEFS: &str = "#/$defs/";

/// Close every object of `root` (a root schema with its `$defs`).
pub fn close_objects(root: &mut Value) {
    let open = open_defs(root);
    let Some(obj) = root.as_object_mut() else {
        return;
    };
    let mut defs = obj.remove("$defs");
    close(obj, false, &open);
    if let Some(Value::Object(defs)) = defs.as_mut() {
        for (name, def) in defs.iter_mut() {
            if let Some(def) = def.as_object_mut() {
                close(def, open.contains(name), &open);
            }
        }
    }
    if let Some(defs) = defs {
        obj.insert("$defs".into(), defs);
    }
}

/// The `$defs` some schema refers to as part of an object (to a fixed point: a part's
/// own subschemas are parts too).
fn open_defs(root: &Value) -> BTreeSet<String> {
    let defs = root.get("$defs").and_then(Value::as_object);
    let mut open = BTreeSet::new();
    loop {
        let mut found = BTreeSet::new();
        parts(root, false, &mut found);
        for (name, def) in defs.into_iter().flatten() {
            parts(def, open.contains(name), &mut found);
        }
        if found.is_subset(&open) {
            return open;
        }
        open.extend(found);
    }
}

/// Collect the defs `schema` refers to as parts (`partial`: `schema` is itself one).
fn parts(schema: &Value, partial: bool, found: &mut BTreeSet<String>) {
    let Some(obj) = schema.as_object() else {
        return;
    };
    let spread = partial || obj.contains_key("properties");
    if spread {
        if let Some(name) = ref_name(obj) {
            found.insert(name);
        }
    }
    for key in APPLICATORS {
        for sub in obj.get(key).and_then(Value::as_array).into_iter().flatten() {
            parts(sub, spread, found);
        }
    }
    for sub in whole_subschemas(obj) {
        parts(sub, false, found);
    }
}

/// Close `obj` unless it is a part, then its subschemas.
fn close(obj: &mut Map<String, Value>, partial: bool, open: &BTreeSet<String>) {
    let has_props = obj.contains_key("properties");
    let spread = partial || has_props;
    let split = APPLICATORS.iter().any(|k| obj.contains_key(*k)) || obj.contains_key("$ref");
    let set = obj.contains_key("additionalProperties") || obj.contains_key("unevaluatedProperties");
    if !partial && !set {
        if has_props && !split {
            obj.insert("additionalProperties".into(), false.into());
        } else if has_props || ref_name(obj).is_some_and(|n| open.contains(&n)) {
            obj.insert("unevaluatedProperties".into(), false.into());
        }
    }
    for key in APPLICATORS {
        if let Some(Value::Array(subs)) = obj.get_mut(key) {
            for sub in subs.iter_mut().filter_map(Value::as_object_mut) {
                close(sub, spread, open);
            }
        }
    }
    for sub in whole_subschemas_mut(obj) {
        if let Some(sub) = sub.as_object_mut() {
            close(sub, false, open);
        }
    }
}

fn ref_name(obj: &Map<String, Value>) -> Option<String> {
    obj.get("$ref")?
        .as_str()?
        .strip_prefix(DEFS)
        .map(str::to_string)
}

/// Subschemas that describe a whole value of their own: property values, array
/// items, map values.
fn whole_subschemas(obj: &Map<String, Value>) -> Vec<&Value> {
    let mut out: Vec<&Value> = Vec::new();
    if let Some(Value::Object(props)) = obj.get("properties") {
        out.extend(props.values());
    }
    for key in ["items", "additionalProperties"] {
        if let Some(v) = obj.get(key) {
            out.push(v);
        }
    }
    if let Some(Value::Array(items)) = obj.get("prefixItems") {
        out.extend(items);
    }
    out
}

fn whole_subschemas_mut(obj: &mut Map<String, Value>) -> Vec<&mut Value> {
    let mut out: Vec<&mut Value> = Vec::new();
    for (key, v) in obj.iter_mut() {
        match (key.as_str(), v) {
            ("properties", Value::Object(props)) => out.extend(props.values_mut()),
            ("prefixItems", Value::Array(items)) => out.extend(items.iter_mut()),
            ("items" | "additionalProperties", v) => out.push(v),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::close_objects;

    #[test]
    fn a_plain_object_is_closed_and_a_map_left_as_it_is() {
        let mut s = json!({
            "type": "object",
            "properties": {
                "a": { "type": "object", "properties": { "x": {} } },
                "m": { "type": "object", "additionalProperties": { "type": "string" } }
            }
        });
        close_objects(&mut s);
        assert_eq!(s["additionalProperties"], json!(false));
        assert_eq!(s["properties"]["a"]["additionalProperties"], json!(false));
        assert_eq!(
            s["properties"]["m"]["additionalProperties"],
            json!({ "type": "string" })
        );
    }

    #[test]
    fn a_flattened_enum_leaves_its_variants_and_their_refs_open() {
        let mut s = json!({
            "type": "object",
            "properties": { "net": {}, "w": { "$ref": "#/$defs/W" } },
            "oneOf": [
                { "type": "object", "properties": { "kind": { "const": "a" } } },
                { "type": "object", "properties": { "kind": { "const": "b" } }, "$ref": "#/$defs/W" }
            ],
            "$defs": { "W": { "type": "object", "properties": { "rtt": {} } } }
        });
        close_objects(&mut s);
        assert_eq!(s["unevaluatedProperties"], json!(false));
        assert!(s.get("additionalProperties").is_none());
        for v in s["oneOf"].as_array().unwrap() {
            assert!(v.get("additionalProperties").is_none(), "{v}");
            assert!(v.get("unevaluatedProperties").is_none(), "{v}");
        }
        // W is a part in one place: open there, and its whole use elsewhere is closed
        // where it is used.
        assert!(s["$defs"]["W"].get("additionalProperties").is_none());
        assert_eq!(s["properties"]["w"]["unevaluatedProperties"], json!(false));
    }

    #[test]
    fn the_variants_of_an_enum_of_its_own_are_closed() {
        let mut s = json!({
            "oneOf": [
                { "type": "object", "properties": { "kind": { "const": "a" } } },
                { "type": "string", "const": "b" }
            ]
        });
        close_objects(&mut s);
        assert_eq!(s["oneOf"][0]["additionalProperties"], json!(false));
        assert!(s["oneOf"][1].get("additionalProperties").is_none());
    }
}
