//! Text from a peer (names, messages, hostnames) shown in logs, terminals or scripts:
//! control characters are escaped so a peer cannot forge a log line (newline, CR),
//! drive the terminal (ESC) or end a comment in a generated script; format characters
//! are escaped so it cannot reorder what is shown (a right-to-left override makes
//! "txt.exe" read "exe.txt") or hide text in it (zero-width characters).
use std::borrow::Cow;
use std::fmt::Write;

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

#[cfg(test)]
mod tests {
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
}
