//! The repository's prose links: every relative markdown link in `README.md`, `CHANGELOG.md` and
//! `docs/*.md` must name a file (or directory) that exists, and a `#anchor` into a markdown file
//! (or into the same file) must name one of its headings, slugged as GitHub does. A failure lists
//! every broken link with its file and line.
//!
//! Links inside fenced code blocks and inline code spans are not links and are skipped, as are
//! links with a scheme (`https:`, `mailto:`), which this test cannot check offline.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use regex::Regex;

// The workspace root (the crate lives in `harness/`).
use hermes_e2e::runner::workspace_root as root;

/// The markdown files whose links are checked, relative to the root: `README.md`, `CHANGELOG.md`
/// and every `docs/*.md`.
fn checked_files(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![PathBuf::from("README.md"), PathBuf::from("CHANGELOG.md")];
    let mut docs: Vec<PathBuf> = fs::read_dir(root.join("docs"))
        .expect("docs/ is readable")
        .map(|e| e.expect("docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| p.strip_prefix(root).expect("under the root").to_path_buf())
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// One link found in a markdown file: its 1-based line and its target as written.
#[derive(Debug, PartialEq)]
struct Link {
    line: usize,
    target: String,
}

/// The text of `line` with inline code spans blanked out (a backtick run opens a span that the
/// next run of the same length closes), so that a link-like text inside code is not read.
fn without_code_spans(line: &str) -> String {
    let bytes = line.as_bytes();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'`' {
            let run = bytes[i..].iter().take_while(|&&b| b == b'`').count();
            let fence = &line[i..i + run];
            if let Some(close) = line[i + run..].find(fence) {
                let end = i + run + close + run;
                out.extend(std::iter::repeat_n(' ', line[i..end].chars().count()));
                i = end;
                continue;
            }
            out.push_str(fence);
            i += run;
            continue;
        }
        let c = line[i..].chars().next().expect("in bounds");
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// Whether `line` opens or closes a fenced code block (```` ``` ```` or `~~~`).
fn is_fence(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("```") || t.starts_with("~~~")
}

/// Every inline link and image (`[text](target)`, `![alt](target)`) and reference definition
/// (`[label]: target`) of `text`, outside code blocks and code spans.
fn links(text: &str) -> Vec<Link> {
    let inline = Regex::new(r#"\]\(\s*(<[^>]*>|[^)\s]*)(?:\s+"[^"]*")?\s*\)"#).unwrap();
    let definition = Regex::new(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)").unwrap();
    let mut found = Vec::new();
    let mut in_fence = false;
    for (i, line) in text.lines().enumerate() {
        if is_fence(line) {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let line = without_code_spans(line);
        let targets = inline
            .captures_iter(&line)
            .chain(definition.captures_iter(&line))
            .map(|c| {
                c[1].trim_start_matches('<')
                    .trim_end_matches('>')
                    .to_string()
            });
        found.extend(targets.map(|target| Link {
            line: i + 1,
            target,
        }));
    }
    found
}

/// GitHub's anchor for a heading's text: the text as rendered (links and code marks dropped),
/// lower-cased, every character that is not a letter, digit, `_`, `-` or space removed, spaces
/// turned into `-`.
fn slug(heading: &str) -> String {
    let link = Regex::new(r"!?\[([^\]]*)\]\([^)]*\)").unwrap();
    let text = link.replace_all(heading, "$1");
    let mut slug = String::new();
    for c in text.chars() {
        if c == ' ' {
            slug.push('-');
        } else if c.is_alphanumeric() || c == '_' || c == '-' {
            slug.extend(c.to_lowercase());
        }
    }
    slug
}

/// The anchors of every heading (ATX, `#` to `######`, outside code blocks) of `text`; a repeated
/// slug gets `-1`, `-2`, … as GitHub gives it.
fn anchors(text: &str) -> HashSet<String> {
    let heading = Regex::new(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$").unwrap();
    let mut anchors = HashSet::new();
    let mut in_fence = false;
    for line in text.lines() {
        if is_fence(line) {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let Some(c) = heading.captures(line) else {
            continue;
        };
        let base = slug(&c[1]);
        let mut anchor = base.clone();
        let mut n = 0;
        while anchors.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        anchors.insert(anchor);
    }
    anchors
}

/// `%20` and the like in a link target, decoded (a target is a path once decoded).
fn percent_decoded(target: &str) -> String {
    let bytes = target.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Some(b) = target
                .get(i + 1..i + 3)
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
            {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// What is wrong with `link` in `file` (relative to `root`), if anything.
fn broken(root: &Path, file: &Path, link: &Link) -> Option<String> {
    let target = link.target.as_str();
    let has_scheme = Regex::new(r"^[A-Za-z][A-Za-z0-9+.-]*:").unwrap();
    if target.is_empty() || has_scheme.is_match(target) || target.starts_with("//") {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((p, a)) => (p, Some(a)),
        None => (target, None),
    };
    let resolved = if path.is_empty() {
        root.join(file)
    } else if let Some(absolute) = path.strip_prefix('/') {
        root.join(percent_decoded(absolute))
    } else {
        root.join(file)
            .parent()
            .expect("a file has a directory")
            .join(percent_decoded(path))
    };
    if !resolved.exists() {
        let shown = resolved.strip_prefix(root).unwrap_or(&resolved);
        return Some(format!("no such file: {}", shown.display()));
    }
    let anchor = anchor.filter(|a| !a.is_empty())?;
    if resolved.extension().is_none_or(|e| e != "md") {
        return None;
    }
    let text = fs::read_to_string(&resolved).ok()?;
    if anchors(&text).contains(&percent_decoded(anchor).to_lowercase()) {
        None
    } else {
        Some(format!(
            "no heading with the anchor #{anchor} in {}",
            resolved.strip_prefix(root).unwrap_or(&resolved).display()
        ))
    }
}

#[test]
fn every_relative_link_in_the_docs_names_a_file_and_heading_that_exist() {
    let root = root();
    let mut problems = Vec::new();
    let mut checked = 0;
    for file in checked_files(&root) {
        let text = match fs::read_to_string(root.join(&file)) {
            Ok(text) => text,
            Err(e) => {
                problems.push(format!("{}: cannot be read: {e}", file.display()));
                continue;
            }
        };
        for link in links(&text) {
            checked += 1;
            if let Some(problem) = broken(&root, &file, &link) {
                problems.push(format!(
                    "{}:{}: link `{}`: {problem}",
                    file.display(),
                    link.line,
                    link.target
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} broken link(s) of {checked}:\n{}",
        problems.len(),
        problems.join("\n")
    );
    assert!(checked > 0, "no links found: the extractor is broken");
}

#[test]
fn links_are_read_outside_code_only() {
    let text = "See [the contract](docs/display-contract.md#rule-8) and ![pic](a%20b.png \"t\").\n\
                `[not](a-link.md)` and ``[nor](this.md)``\n\
                ```\n[inside](a-fence.md)\n```\n\
                [ref]: <docs/x.md>\n";
    let found = links(text);
    let found: Vec<(usize, &str)> = found.iter().map(|l| (l.line, l.target.as_str())).collect();
    assert_eq!(
        found,
        vec![
            (1, "docs/display-contract.md#rule-8"),
            (1, "a%20b.png"),
            (6, "docs/x.md")
        ]
    );
}

#[test]
fn anchors_are_slugged_as_github_slugs_them() {
    let text = "# What a verdict means\n## Exit codes (one table)\n## `run --bless`\n\
                ```\n# not a heading\n```\n## Exit codes (one table)\n### Row counts: `prompt_rows` & co.\n";
    let mut got: Vec<String> = anchors(text).into_iter().collect();
    got.sort();
    assert_eq!(
        got,
        vec![
            "exit-codes-one-table",
            "exit-codes-one-table-1",
            "row-counts-prompt_rows--co",
            "run---bless",
            "what-a-verdict-means",
        ]
    );
}

#[test]
fn a_missing_file_and_a_missing_heading_are_reported() {
    let root = root();
    let file = Path::new("README.md");
    let link = |target: &str| Link {
        line: 1,
        target: target.to_string(),
    };
    assert!(broken(&root, file, &link("docs/no-such-file.md")).is_some());
    assert!(broken(&root, file, &link("README.md#no-such-heading-anywhere")).is_some());
    assert!(broken(&root, file, &link("harness/Cargo.toml")).is_none());
    assert!(broken(&root, file, &link("https://example.com/x.md")).is_none());
}
