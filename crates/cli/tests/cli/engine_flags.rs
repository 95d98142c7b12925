//! The engine names no CLI flag: a string literal in `crates/engine/src` (outside
//! tests) that holds `--word` is a sentence for people composed in the engine, and the
//! flag it suggests belongs in report (issue 32: typed outcomes in the engine, words
//! in report). The engine returns a typed value (an error variant, a reason carrying
//! the numbers and names); report, or the CLI's error rendering, words it.
//!
//! `ALLOWED` lists the literals that stay, each with why. Like the function budget,
//! the list only shrinks: an entry no literal matches any more fails until removed.

use std::path::Path;

/// (file under `crates/engine/src`, flag) pairs allowed to stay, and why.
const ALLOWED: &[(&str, &str, &str)] = &[
    // The shell command `--ssh` runs on a node: a command, not words for people.
    ("ssh/script.rs", "--version", "a command the engine runs"),
    ("ssh/script.rs", "--ssh-stdio", "a command the engine runs"),
    ("ssh/script.rs", "--lifetime", "a command the engine runs"),
    ("ssh/script.rs", "--log-format", "a command the engine runs"),
    // Prometheus HELP text is part of the exposition the agent serves itself on
    // /metrics (scraped straight from it, no report in between): it documents the
    // metric by the serve flag that sets it.
    ("metrics/watch.rs", "--watch-expect", "/metrics HELP text"),
    ("metrics/watch.rs", "--watch-every", "/metrics HELP text"),
];

/// The string literals of `src` (normal, byte and raw), comments and character
/// literals skipped: (line, text).
fn literals(src: &str) -> Vec<(usize, String)> {
    let c: Vec<char> = src.chars().collect();
    let (mut i, mut line, mut out) = (0, 1, Vec::new());
    let ident = |k: usize| k > 0 && (c[k - 1].is_alphanumeric() || c[k - 1] == '_');
    while i < c.len() {
        let rest = |k: usize, s: &str| {
            s.chars()
                .enumerate()
                .all(|(j, ch)| c.get(k + j) == Some(&ch))
        };
        if rest(i, "//") {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if rest(i, "/*") {
            while i < c.len() && !rest(i, "*/") {
                line += usize::from(c[i] == '\n');
                i += 1;
            }
            i += 2;
            continue;
        }
        let b = usize::from(c[i] == 'b' && !ident(i));
        if c.get(i + b) == Some(&'r') && !ident(i) {
            let mut k = i + b + 1;
            let mut hashes = 0;
            while c.get(k) == Some(&'#') {
                hashes += 1;
                k += 1;
            }
            if c.get(k) == Some(&'"') {
                let close: String = std::iter::once('"')
                    .chain(std::iter::repeat_n('#', hashes))
                    .collect();
                let start = k + 1;
                let mut j = start;
                while j < c.len() && !rest(j, &close) {
                    j += 1;
                }
                let text: String = c[start..j.min(c.len())].iter().collect();
                out.push((line, text.clone()));
                line += text.matches('\n').count();
                i = j + close.len();
                continue;
            }
        }
        match c[i] {
            '"' => {
                let mut j = i + 1;
                while j < c.len() && c[j] != '"' {
                    j += if c[j] == '\\' { 2 } else { 1 };
                }
                let text: String = c[i + 1..j.min(c.len())].iter().collect();
                out.push((line, text.clone()));
                line += text.matches('\n').count();
                i = j + 1;
            }
            '\'' if c.get(i + 1) == Some(&'\\') => {
                let mut j = i + 3;
                while j < c.len() && c[j] != '\'' {
                    j += 1;
                }
                i = j + 1;
            }
            '\'' if c.get(i + 2) == Some(&'\'') => i += 3,
            ch => {
                line += usize::from(ch == '\n');
                i += 1;
            }
        }
    }
    out
}

/// The CLI flags (`--word`) a literal names.
fn flags(text: &str) -> Vec<String> {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    for i in 0..c.len().saturating_sub(2) {
        let before_ok = i == 0 || !(c[i - 1].is_alphanumeric() || c[i - 1] == '-');
        if before_ok && c[i] == '-' && c[i + 1] == '-' && c[i + 2].is_ascii_lowercase() {
            let end = (i + 2..c.len())
                .find(|&k| !(c[k].is_ascii_lowercase() || c[k].is_ascii_digit() || c[k] == '-'))
                .unwrap_or(c.len());
            out.push(
                c[i..end]
                    .iter()
                    .collect::<String>()
                    .trim_end_matches('-')
                    .to_string(),
            );
        }
    }
    out
}

/// (file, line, flag) for every flag a non-test literal of the engine names.
fn found() -> Vec<(String, usize, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../engine/src");
    let mut files = Vec::new();
    crate::fn_budget::sources(&root, &mut files);
    assert!(files.len() > 50, "found only {} engine files", files.len());
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        // A file's unit tests sit in one `#[cfg(test)]` module at its end.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        let rel = f
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        for (line, lit) in literals(code) {
            for flag in flags(&lit) {
                out.push((rel.clone(), line, flag));
            }
        }
    }
    out
}

#[test]
fn the_scanner_finds_flags_in_literals_only() {
    let src = "// \"--no\"\nlet a = \"use --bind here\";\nlet c = '\"';\n/* \"--no\" */ let b = r#\"x --net\"#; let d = \"a-b--c 1--2 ---x\";";
    let lits = literals(src);
    let named: Vec<(usize, String)> = lits
        .iter()
        .flat_map(|(l, t)| flags(t).into_iter().map(move |f| (*l, f)))
        .collect();
    assert_eq!(named, [(2, "--bind".to_string()), (4, "--net".to_string())]);
}

#[test]
fn no_engine_string_literal_names_a_cli_flag_outside_the_list() {
    let found = found();
    let mut wrong = Vec::new();
    for (file, line, flag) in &found {
        let allowed = ALLOWED.iter().any(|(f, fl, _)| f == file && fl == flag);
        if !allowed {
            wrong.push(format!(
                "crates/engine/src/{file}:{line}: a literal names {flag}: return a typed value (an error variant, a reason with its numbers) and word it, with the flag, in crates/report"
            ));
        }
    }
    for (file, flag, _) in ALLOWED {
        if !found.iter().any(|(f, _, fl)| f == file && fl == flag) {
            wrong.push(format!(
                "ALLOWED lists {file} {flag}, which no literal names any more: remove the entry"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
