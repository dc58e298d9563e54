//! The docs' numbers that quote the binary stay in step with it:
//!
//! - every fenced example in `README.md`, `docs/*.md` and `fixtures/*/PROVENANCE.md` that starts
//!   with `$ hermes-e2e inspect …` or `$ hermes-e2e check …` (the commands that need no client)
//!   is run from the workspace root, and each line of the example must be a line of the output,
//!   in order (a line `…` marks an abridgement);
//! - the JSON verdict of docs/counting.md is that command's output: every value it shows is the
//!   binary's (a list shows some of the binary's entries, in order; a string ending in `…` is a
//!   prefix);
//! - each fixture's `PROVENANCE.md` states the numbers its check command gives.

use std::path::PathBuf;
use std::process::Command;

mod common {
    pub mod bin;
}

use common::bin::BIN;

// The workspace root (the crate lives in `harness/`).
use hermes_e2e::runner::workspace_root as root;

/// The markdown files with examples: `README.md`, `docs/*.md`, `fixtures/*/PROVENANCE.md`.
fn documents() -> Vec<PathBuf> {
    let root = root();
    let mut files = vec![root.join("README.md")];
    for dir in ["docs", "fixtures"] {
        let mut found: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .flat_map(|p| {
                if p.is_dir() {
                    vec![p.join("PROVENANCE.md")]
                } else {
                    vec![p]
                }
            })
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "md"))
            .collect();
        found.sort();
        files.extend(found);
    }
    files
}

/// The fenced blocks of `text`: (1-based line of the opening fence, the lines inside).
fn blocks(text: &str) -> Vec<(usize, Vec<&str>)> {
    let mut out = Vec::new();
    let mut open: Option<(usize, Vec<&str>)> = None;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            match open.take() {
                Some(block) => out.push(block),
                None => open = Some((i + 1, Vec::new())),
            }
        } else if let Some((_, lines)) = open.as_mut() {
            lines.push(line);
        }
    }
    out
}

fn run(args: &[&str]) -> String {
    let o = Command::new(BIN)
        .args(args)
        .current_dir(root())
        .output()
        .expect("run hermes-e2e");
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn quoted_outputs_are_what_the_binary_prints() {
    let mut checked = 0;
    let mut wrong = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for (line, block) in blocks(&text) {
            let Some(command) = block.first().and_then(|l| l.strip_prefix("$ hermes-e2e ")) else {
                continue;
            };
            let args: Vec<&str> = command.split_whitespace().collect();
            if !matches!(args.first(), Some(&("inspect" | "check"))) {
                continue;
            }
            checked += 1;
            let out = run(&args);
            let mut printed = out.lines();
            for quoted in &block[1..] {
                if quoted.trim() == "…" {
                    continue;
                }
                if !printed.any(|l| l.trim_end() == quoted.trim_end()) {
                    wrong.push(format!(
                        "{}:{line}: `hermes-e2e {command}` does not print (in this order): {quoted}",
                        doc.display()
                    ));
                    break;
                }
            }
        }
    }
    assert!(checked >= 1, "no example found");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Whether every value `doc` shows is the binary's `got`, at `path` (for the message).
fn quoted(doc: &serde_json::Value, got: &serde_json::Value, path: &str, wrong: &mut Vec<String>) {
    use serde_json::Value;
    match (doc, got) {
        (Value::Object(d), Value::Object(g)) => {
            for (k, v) in d {
                match g.get(k) {
                    Some(gv) => quoted(v, gv, &format!("{path}.{k}"), wrong),
                    None => wrong.push(format!("{path}.{k}: not in the output")),
                }
            }
        }
        (Value::Array(d), Value::Array(g)) => {
            // Some of the binary's entries, in order.
            let mut rest = g.iter();
            for (i, v) in d.iter().enumerate() {
                let found = rest.any(|gv| {
                    let mut w = Vec::new();
                    quoted(v, gv, path, &mut w);
                    w.is_empty()
                });
                if !found {
                    wrong.push(format!("{path}[{i}]: {v} is not in {got}"));
                }
            }
        }
        (Value::String(d), Value::String(g)) if d.ends_with('…') => {
            let head = d.trim_end_matches('…').trim_end();
            let parts: Vec<&str> = head.split('…').map(str::trim).collect();
            let mut at = 0;
            for p in parts {
                match g[at..].find(p) {
                    Some(i) => at += i + p.len(),
                    None => {
                        wrong.push(format!("{path}: {d:?} does not abridge {g:?}"));
                        break;
                    }
                }
            }
        }
        (Value::String(d), Value::String(g)) if d.contains('…') && !g.contains('…') => {
            // `… --session X --expect …`: the parts in order.
            let mut at = 0;
            for p in d.split('…').map(str::trim).filter(|p| !p.is_empty()) {
                match g[at..].find(p) {
                    Some(i) => at += i + p.len(),
                    None => {
                        wrong.push(format!("{path}: {d:?} does not abridge {g:?}"));
                        break;
                    }
                }
            }
        }
        _ if doc == got => {}
        _ => wrong.push(format!("{path}: the doc says {doc}, the binary {got}")),
    }
}

#[test]
fn the_json_verdict_in_counting_md_is_the_binarys() {
    let text = std::fs::read_to_string(root().join("docs/counting.md")).unwrap();
    let section = &text[text.find("## The JSON verdict").expect("the section")..];
    // The command is in the prose before the block, in backticks.
    let command = section
        .split("This is `hermes-e2e ")
        .nth(1)
        .and_then(|s| s.split('`').next())
        .expect("the command");
    let args: Vec<&str> = command.split_whitespace().collect();
    let (_, block) = blocks(section)
        .into_iter()
        .find(|(_, b)| b.first().is_some_and(|l| l.starts_with('{')))
        .expect("the JSON block");
    let doc: serde_json::Value =
        serde_json::from_str(&block.join("\n")).expect("the doc's JSON parses");
    let got: serde_json::Value = serde_json::from_str(&run(&args)).unwrap();
    let mut wrong = Vec::new();
    quoted(&doc, &got, "$", &mut wrong);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Each fixture's `PROVENANCE.md` quotes the numbers of the verdict its check command gives: its
/// last checkpoint line (`  - \`after --resume\` (…): VERDICT`) and what it says of vt100.
#[test]
fn each_provenance_gives_the_numbers_of_its_check() {
    let number = regex::Regex::new(
        r"(\d+) (words rendered more than once|messages? missing|words of internal text)",
    )
    .unwrap();
    let mut wrong = Vec::new();
    for dir in std::fs::read_dir(root().join("fixtures"))
        .unwrap()
        .flatten()
    {
        let provenance = dir.path().join("PROVENANCE.md");
        let Ok(text) = std::fs::read_to_string(&provenance) else {
            continue;
        };
        let Some(command) = text
            .lines()
            .find_map(|l| l.split("without a client: `hermes-e2e ").nth(1))
            .and_then(|rest| rest.split('`').next())
        else {
            continue;
        };
        let numbers = |command: &str| -> Vec<(String, String)> {
            let args: Vec<&str> = command.split_whitespace().collect();
            number
                .captures_iter(&run(&args))
                .map(|c| (c[1].to_owned(), c[2].to_owned()))
                .collect()
        };
        // Every number the provenance states, with a kind the check prints, is one the check
        // gives: on its last checkpoint line (the verdict the command reproduces), and on the
        // lines about vt100 (the command on vt100, check's default).
        let last = text.lines().rfind(|l| l.starts_with("  - `"));
        let on_vt100 = command.replace(" --terminal reflow", "");
        let vt100 = text.lines().filter(|l| l.contains("vt100"));
        let lines = last
            .into_iter()
            .map(|l| (l, command))
            .chain(vt100.map(|l| (l, on_vt100.as_str())));
        for (line, command) in lines {
            let got = numbers(command);
            for c in number.captures_iter(line) {
                let said = (c[1].to_owned(), c[2].to_owned());
                if !got.contains(&said) {
                    wrong.push(format!(
                        "{}: says {} {} where `hermes-e2e {command}` gives {got:?}",
                        provenance.display(),
                        said.0,
                        said.1
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Upstream references checked against the upstream tracker and found to be about another bug
/// (issue 33, item 13): `#79391` is an interrupted auto-compaction deleting history, not an
/// interrupted turn's duplicate; `#81130` and PR `#81231` (closed unmerged) are about in-place
/// compaction, not the rotating undo/retry: they are cited for it only (`history/undo_inplace`),
/// and #79391 nowhere but docs/upstream-issues.md, which says what each thread is about.
#[test]
fn withdrawn_upstream_references_are_not_cited() {
    let root = root();
    let mut files = documents();
    let mut scenarios = vec![root.join("scenarios")];
    while let Some(dir) = scenarios.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                scenarios.push(p);
            } else if p.extension().is_some_and(|x| x == "toml") {
                files.push(p);
            }
        }
    }
    assert!(files.len() > 20, "{files:?}");
    let mut cited = Vec::new();
    // The table of upstream threads says what each of them is about: the one place they appear.
    files.retain(|f| !f.ends_with("docs/upstream-issues.md"));
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        // #81130 is the in-place undo: cited for it, never for a rotating compaction.
        let rotating =
            file.extension().is_some_and(|x| x == "toml") && text.contains("in_place = false");
        for (i, line) in text.lines().enumerate() {
            let about_rotating = rotating || line.to_lowercase().contains("rotating");
            for (reference, wrong) in [
                ("#79391", true),
                ("#81130", about_rotating),
                ("#81231", about_rotating),
            ] {
                if wrong && line.contains(reference) {
                    cited.push(format!("{}:{}: {reference}", file.display(), i + 1));
                }
            }
        }
    }
    assert!(cited.is_empty(), "{}", cited.join("\n"));
}
