//! Text from a peer (names, messages, hostnames) shown in logs, terminals or scripts:
//! control characters are escaped so a peer cannot forge a log line (newline, CR),
//! drive the terminal (ESC) or end a comment in a generated script; format characters
//! are escaped so it cannot reorder what is shown (a right-to-left override makes
//! "txt.exe" read "exe.txt") or hide text in it (zero-width characters).
//!
//! Everything a peer says arrives as JSON: the agent protocol's frames
//! (`codec::Codec::decode_body`) and a node's lines over SSH. Both decode through
//! [`from_peer_json`], which escapes every string in the message before it becomes a
//! typed value: that is the one boundary, so a hostname, an interface name, an error
//! text or a mesh node's finding is clean wherever it goes next (text, logs, JSON
//! documents, the history, a generated script), and no renderer has to remember it.
use std::borrow::Cow;
use std::fmt::Write;

use serde::de::DeserializeOwned;
use serde_json::Value;

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// True for a character that must not reach a terminal or a log as itself: C0 and C1
/// controls (general category Cc), format characters (Cf: bidirectional overrides,
/// embeddings and isolates, zero-width joiners and spaces, the byte order mark, the
/// soft hyphen, invisible operators, tags) and the line and paragraph separators (Zl,
/// Zp), which some terminals and log viewers break lines at.
fn hidden(c: char) -> bool {
    matches!(
        c.general_category(),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
    )
}

/// `t` cut to at most `max` bytes, at a character boundary.
pub fn cut_at(t: &mut String, max: usize) {
    if t.len() > max {
        let mut end = max;
        while !t.is_char_boundary(end) {
            end -= 1;
        }
        t.truncate(end);
    }
}

/// `s` with every control, format or separator character written as an escape (`\n`,
/// `\r`, `\t`, `\x1b`, `\u{85}`, `\u{202e}`) and backslashes doubled when anything was
/// escaped; borrowed when clean.
pub fn escape_control(s: &str) -> Cow<'_, str> {
    // Printable ASCII needs no table look-up.
    if !s.chars().any(|c| !(' '..='~').contains(&c) && hidden(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x80 && c.is_control() => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if hidden(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `s` escaped, reusing it when it is clean.
fn escaped(s: String) -> String {
    match escape_control(&s) {
        Cow::Borrowed(_) => s,
        Cow::Owned(e) => e,
    }
}

/// `v` with every string in it escaped, object keys included.
pub fn escape_json(v: Value) -> Value {
    match v {
        Value::String(s) => Value::String(escaped(s)),
        Value::Array(a) => Value::Array(a.into_iter().map(escape_json).collect()),
        Value::Object(o) => Value::Object(
            o.into_iter()
                .map(|(k, v)| (escaped(k), escape_json(v)))
                .collect(),
        ),
        other => other,
    }
}

/// True when JSON text cannot hold a control or format character in a string: only
/// printable ASCII and the whitespace allowed between tokens (a raw control character
/// inside a string is invalid JSON), and no backslash (`\n`, `\u202e` need one).
fn plainly_clean(json: &[u8]) -> bool {
    json.iter()
        .all(|&b| ((b' '..=b'~').contains(&b) && b != b'\\') || matches!(b, b'\t' | b'\n' | b'\r'))
}

/// Decodes a message a peer sent, every string in it escaped ([`escape_control`]).
/// Plainly clean JSON is decoded as it is; anything else goes through a `Value` and
/// is escaped.
pub fn from_peer_json<T: DeserializeOwned>(json: &[u8]) -> Result<T, serde_json::Error> {
    if plainly_clean(json) {
        return serde_json::from_slice(json);
    }
    let v: Value = serde_json::from_slice(json)?;
    serde_json::from_value(escape_json(v))
}

/// JSON text with every string in it escaped, borrowed when plainly clean: for
/// documents read back from the history (which may have been brought from another
/// machine, or written by hand).
pub fn escape_json_text(json: &str) -> Result<Cow<'_, str>, serde_json::Error> {
    if plainly_clean(json.as_bytes()) {
        return Ok(Cow::Borrowed(json));
    }
    let v: Value = serde_json::from_str(json)?;
    Ok(Cow::Owned(escape_json(v).to_string()))
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::escape_control;

    #[test]
    fn control_characters_are_escaped_and_clean_text_is_borrowed() {
        for (input, want) in [
            ("eth0", "eth0"),
            ("a\nb", "a\\nb"),
            ("x\r\n2026 WARN forged", "x\\r\\n2026 WARN forged"),
            ("\x1b[2Jhi", "\\x1b[2Jhi"),
            ("tab\there\\", "tab\\there\\\\"),
            ("c1\u{85}", "c1\\u{85}"),
            ("back\\slash", "back\\slash"),
        ] {
            assert_eq!(escape_control(input), want, "{input:?}");
        }
        assert!(matches!(
            escape_control("clean"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn bidi_overrides_and_other_format_characters_are_escaped() {
        for (input, want) in [
            // Right-to-left override: "node\u{202e}txt.exe" would show as "nodeexe.txt".
            ("node\u{202e}txt.exe", "node\\u{202e}txt.exe"),
            // Left-to-right and right-to-left embeddings, pop, and override.
            (
                "\u{202a}\u{202b}\u{202c}\u{202d}",
                "\\u{202a}\\u{202b}\\u{202c}\\u{202d}",
            ),
            // Isolates (LRI, RLI, FSI, PDI) and the marks.
            (
                "\u{2066}a\u{2067}b\u{2068}c\u{2069}\u{200e}\u{200f}\u{61c}",
                "\\u{2066}a\\u{2067}b\\u{2068}c\\u{2069}\\u{200e}\\u{200f}\\u{61c}",
            ),
            // Zero-width space, joiners, word joiner, byte order mark, soft hyphen.
            (
                "a\u{200b}b\u{200c}\u{200d}\u{2060}\u{feff}\u{ad}",
                "a\\u{200b}b\\u{200c}\\u{200d}\\u{2060}\\u{feff}\\u{ad}",
            ),
            // Tag characters (invisible, outside the BMP), line and paragraph separators.
            (
                "x\u{e0041}\u{2028}\u{2029}",
                "x\\u{e0041}\\u{2028}\\u{2029}",
            ),
            // A backslash beside an escape is doubled, so the escape cannot be forged.
            ("\\u{202e}\u{202e}", "\\\\u{202e}\\u{202e}"),
        ] {
            assert_eq!(escape_control(input), want, "{input:?}");
        }
        // Letters of right-to-left scripts, accents and emoji are text, not format.
        for clean in ["שלום", "مرحبا", "café", "naïve", "日本", "🙂", "ñ"] {
            assert!(
                matches!(escape_control(clean), std::borrow::Cow::Borrowed(_)),
                "{clean:?}"
            );
        }
    }

    #[test]
    #[allow(clippy::unwrap_used)]
    fn every_string_a_peer_sends_is_escaped_when_it_is_decoded() {
        #[derive(serde::Deserialize, Debug, PartialEq)]
        struct Msg {
            host: String,
            ifaces: Vec<String>,
            errors: std::collections::BTreeMap<String, Option<String>>,
            mtu: u32,
        }
        let raw = serde_json::json!({
            "host": "node\u{202e}txt.exe",
            "ifaces": ["eth0", "e\u{1b}[31mred", "a\nforged line"],
            "errors": { "k\u{2066}ey": "reset\r\nwarn FORGED", "ok": null },
            "mtu": 9000,
        });
        let bytes = serde_json::to_vec(&raw).unwrap();
        let m: Msg = super::from_peer_json(&bytes).unwrap();
        assert_eq!(m.host, "node\\u{202e}txt.exe");
        assert_eq!(m.ifaces, ["eth0", "e\\x1b[31mred", "a\\nforged line"]);
        assert_eq!(
            m.errors.get("k\\u{2066}ey"),
            Some(&Some("reset\\r\\nwarn FORGED".to_string()))
        );
        assert_eq!(m.mtu, 9000);
        // Clean text, ASCII or not, is kept as it is; escaping twice changes nothing.
        for clean in [r#""eth0""#, r#""caf\u00e9 \\ \"q\"""#, "\"日本\""] {
            let once: String = super::from_peer_json(clean.as_bytes()).unwrap_or_default();
            let direct: String = serde_json::from_str(clean).unwrap_or_default();
            assert_eq!(once, direct, "{clean}");
        }
        let escaped: String = super::from_peer_json(br#""a\u202e""#).unwrap_or_default();
        let again: String =
            super::from_peer_json(&serde_json::to_vec(&escaped).unwrap_or_default())
                .unwrap_or_default();
        assert_eq!(escaped, again);
        // Stored documents, pretty-printed or not.
        let pretty = serde_json::to_string_pretty(&raw).unwrap();
        let text = super::escape_json_text(&pretty).unwrap();
        let m: Msg = serde_json::from_str(&text).unwrap();
        assert_eq!(m.host, "node\\u{202e}txt.exe");
        let clean = "{\n  \"a\": \"eth0\"\n}";
        assert!(matches!(
            super::escape_json_text(clean).unwrap(),
            Cow::Borrowed(_)
        ));
        // Malformed JSON is still an error.
        assert!(super::from_peer_json::<String>(b"\"\\u202").is_err());
    }
}
