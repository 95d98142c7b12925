//! Text from a peer (names, messages, hostnames) shown in logs, terminals or scripts:
//! control characters are escaped so a peer cannot forge a log line (newline, CR),
//! drive the terminal (ESC) or end a comment in a generated script.
use std::borrow::Cow;
use std::fmt::Write;

/// `s` with every control character written as an escape (`\n`, `\r`, `\t`, `\x1b`,
/// `\u{85}`) and backslashes doubled when anything was escaped; borrowed when clean.
pub fn escape_control(s: &str) -> Cow<'_, str> {
    if !s.chars().any(char::is_control) {
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
            c if c.is_control() => {
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
}
