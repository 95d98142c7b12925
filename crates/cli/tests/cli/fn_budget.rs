//! The function budget: no non-test function in `crates/` over 80 lines, measured as
//! `/work/shared/tools/fnlen.py` does (a function's lines from its `fn` to its closing
//! brace; strings, characters and comments skipped; `#[cfg(test)]` modules, `tests/`,
//! `tests.rs` and `*_tests.rs` files left out). A file may be as long as its one
//! concern needs: the budget is on functions, never on files.
//!
//! `ALLOWED` lists the functions still over it, each at its length now. The list only
//! shrinks: a listed function that grows fails, and one that now fits (or moved) fails
//! until its line is removed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The most lines a non-test function may take.
const BUDGET: usize = 80;

/// Functions over the budget while they are being split: (file under `crates/`,
/// function, its lines now). None is left: a function over the budget is split by
/// concern into named steps, never listed here again.
const ALLOWED: &[(&str, &str, usize)] = &[];

/// `line` with string and character literals emptied and a `//` comment cut.
fn strip(line: &str) -> String {
    let c: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < c.len() {
        match c[i] {
            '"' => {
                // A string closed on this line becomes "": its braces do not count.
                let mut j = i + 1;
                while j < c.len() && c[j] != '"' {
                    j += if c[j] == '\\' { 2 } else { 1 };
                }
                if j < c.len() {
                    out.push_str("\"\"");
                    i = j + 1;
                } else {
                    out.push('"');
                    i += 1;
                }
            }
            '\'' if c.get(i + 1) == Some(&'\\') && c.get(i + 3) == Some(&'\'') => {
                out.push_str("''");
                i += 4;
            }
            '\'' if c.get(i + 2) == Some(&'\'') && c.get(i + 1) != Some(&'\'') => {
                out.push_str("''");
                i += 3;
            }
            '/' if c.get(i + 1) == Some(&'/') => break,
            ch => {
                out.push(ch);
                i += 1;
            }
        }
    }
    out
}

/// The name of the function a (stripped) line declares, if it declares one.
fn declared_fn(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    if let Some(r) = rest.strip_prefix("pub") {
        let r = match r.strip_prefix('(') {
            Some(inner) => &inner[inner.find(')')? + 1..],
            None => r,
        };
        if !r.starts_with(char::is_whitespace) {
            return None;
        }
        rest = r.trim_start();
    }
    for word in ["const", "async", "unsafe"] {
        if let Some(r) = rest.strip_prefix(word) {
            if r.starts_with(char::is_whitespace) {
                rest = r.trim_start();
            }
        }
    }
    if let Some(r) = rest.strip_prefix("extern") {
        let r = r.trim_start().strip_prefix("\"\"")?;
        rest = r.trim_start();
    }
    let r = rest.strip_prefix("fn")?;
    if !r.starts_with(char::is_whitespace) {
        return None;
    }
    let r = r.trim_start();
    let end = r
        .find(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
        .unwrap_or(r.len());
    (end > 0).then(|| &r[..end])
}

fn braces(s: &str) -> i64 {
    s.matches('{').count() as i64 - s.matches('}').count() as i64
}

/// Every non-test function of one file over `limit` lines: (name, lines, line number).
fn long_fns(text: &str, limit: usize) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.split('\n').collect();
    let stripped: Vec<String> = lines.iter().map(|l| strip(l)).collect();
    let mut long = Vec::new();
    let (mut depth, mut in_test, mut test_depth) = (0i64, false, None);
    for i in 0..lines.len() {
        let s = &stripped[i];
        if lines[i].trim_start().starts_with("#[cfg(test)]") {
            in_test = true;
            test_depth = Some(depth);
        }
        let ahead = stripped[i..(i + 15).min(lines.len())].concat();
        if let Some(name) = declared_fn(s).filter(|_| !in_test && ahead.contains('{')) {
            let (mut d, mut started, mut j) = (0i64, false, i);
            while j < lines.len() {
                let t = &stripped[j];
                d += braces(t);
                started |= t.contains('{');
                if (started && d <= 0) || (!started && t.trim_end().ends_with(';')) {
                    break;
                }
                j += 1;
            }
            let n = j - i + 1;
            if started && n > limit {
                long.push((name.to_string(), n, i + 1));
            }
        }
        depth += braces(s);
        if in_test && test_depth.is_some_and(|t| depth <= t) && i > 0 && s.contains('}') {
            in_test = false;
        }
    }
    long
}

/// The non-test Rust files under `dir` (the budget's, and the engine-flags scan's):
/// everything but tests (`tests/`, `*_tests/`, `tests.rs`, `*_tests.rs`), fuzz
/// targets, benchmarks and build output.
pub(crate) fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            if !["target", "tests", "fuzz", "benches", "bench"].contains(&name.as_str())
                && !name.ends_with("_tests")
            {
                sources(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs")
            && name != "tests.rs"
            && !name.ends_with("_tests.rs")
        {
            out.push(p);
        }
    }
}

/// (file under `crates/`, function) → the longest such function's lines.
fn measured(limit: usize) -> BTreeMap<(String, String), usize> {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    sources(&crates, &mut files);
    assert!(files.len() > 100, "found only {} source files", files.len());
    let mut found = BTreeMap::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let rel = f
            .strip_prefix(&crates)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        for (name, n, _) in long_fns(&text, limit) {
            let e = found.entry((rel.clone(), name)).or_insert(0);
            *e = (*e).max(n);
        }
    }
    found
}

#[test]
fn no_function_outside_the_list_is_over_80_lines_and_the_list_only_shrinks() {
    let t0 = std::time::Instant::now();
    let found = measured(BUDGET);
    let mut wrong = Vec::new();
    for ((file, name), n) in &found {
        match ALLOWED.iter().find(|(f, fname, _)| f == file && fname == name) {
            None => wrong.push(format!(
                "{file}: fn {name} is {n} lines, over the {BUDGET}-line budget: split it into named helpers that each do one thing"
            )),
            Some((_, _, was)) if n > was => wrong.push(format!(
                "{file}: fn {name} grew from {was} to {n} lines; it is on the list to shrink, not to grow"
            )),
            Some((_, _, was)) if n < was => wrong.push(format!(
                "{file}: fn {name} shrank from {was} to {n} lines: lower its entry in ALLOWED to {n}"
            )),
            Some(_) => {}
        }
    }
    for (file, name, was) in ALLOWED {
        if !found.contains_key(&((*file).to_string(), (*name).to_string())) {
            wrong.push(format!(
                "{file}: fn {name} (listed at {was} lines) is no longer over {BUDGET} here: remove its entry from ALLOWED"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // It runs with every `cargo test`: it must stay cheap.
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        t0.elapsed()
    );
}

#[test]
fn the_measure_counts_a_function_from_fn_to_its_closing_brace_and_skips_tests() {
    let body = |n: usize| "    let x = 1;\n".repeat(n);
    let text = format!(
        "pub(crate) fn long(a: u8) -> u8 {{\n{}    let s = \"}}\"; // }} in a comment\n    let c = '}}';\n    a\n}}\n\nfn short() {{}}\n\n#[cfg(test)]\nmod tests {{\n    fn long_test() {{\n{}    }}\n}}\n\nasync fn after_tests() {{\n{}}}\n",
        body(80),
        body(100),
        body(81)
    );
    let long = long_fns(&text, BUDGET);
    let got: Vec<(&str, usize)> = long.iter().map(|(n, l, _)| (n.as_str(), *l)).collect();
    assert_eq!(got, [("long", 85), ("after_tests", 83)], "{long:?}");
    assert!(long_fns(&text, 85).iter().all(|(n, _, _)| n != "long"));
    assert_eq!(
        declared_fn("    pub(super) const unsafe fn x_1<T>()"),
        Some("x_1")
    );
    assert_eq!(declared_fn("    extern \"\" fn cb()"), Some("cb"));
    assert_eq!(declared_fn("let fnord = 1;"), None);
    assert_eq!(declared_fn("    pubfn x()"), None);
}
