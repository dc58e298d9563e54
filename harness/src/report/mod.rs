//! Stage `report`: verdicts for people (text), machines (one JSON object per line, [`json`]) and
//! browsers ([`html`]).
//!
//! Input: a [`ScenarioResult`]. Output: text in the style of snapbox/regex-test failures — finding,
//! expected, got (with the repeated passage quoted and its screen rows), cause (rows, uids,
//! sessions), the step and scenario line, what was kept, and the exact command to rerun.
//!
//! The words about a repeat, a missing message and a cause are the oracle's
//! ([`crate::oracle::wording`]): the three outputs differ in layout, not in wording.

pub mod html;
pub mod json;

use std::fmt::Write as _;

use crate::oracle::wording;
use crate::runner::{CheckResult, ScenarioResult};
use crate::scenario::RowPins;

pub use json::json_line;

/// `text` safe to print on a terminal: control characters other than newline and tab (C0, DEL,
/// C1) are escaped as `\u{..}`. Text from a user's database (session ids, titles, content) may
/// hold escape sequences; a triager's terminal must show them, not execute them.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() && c != '\n' && c != '\t' {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// The human report of one scenario: one `ok` line, or a `FAIL` block a maintainer can act on.
pub fn text(result: &ScenarioResult) -> String {
    let mut out = String::new();
    let status = if result.passed { "ok  " } else { "FAIL" };
    let _ = writeln!(
        out,
        "{status} {}  [{}, {:.1} s, client {:.1} s]",
        result.scenario, result.client, result.wall_secs, result.client_secs
    );
    for c in &result.checks {
        if c.mismatches.is_empty() {
            let _ = writeln!(out, "  {}: {}", c.check.at, c.verdict);
            // Shown where the scenario pins them (every live check counts them).
            match &c.row_counts {
                Some(rows) if c.expected.rows != RowPins::default() => {
                    let _ = writeln!(out, "    rows: {}", wording::rows_line(rows));
                }
                _ => {}
            }
            if let Some(note) = &c.terminal_note {
                let _ = writeln!(out, "    note: {note}");
            }
            continue;
        }
        let step = if c.line == 0 {
            format!("resumed through `{}`", c.check.at)
        } else {
            format!(
                "`check {}` ({}:{})",
                c.check.at,
                result.file.display(),
                c.line
            )
        };
        out.push_str(&failed_check(c, &step));
    }
    if let Some(e) = &result.error {
        let at = result
            .error_line
            .map(|l| format!(" ({}:{l})", result.file.display()))
            .unwrap_or_default();
        let _ = writeln!(out, "  error{at}:");
        for line in e.lines() {
            let _ = writeln!(out, "    {line}");
        }
    }
    if !result.passed {
        let _ = writeln!(
            out,
            "  kept:     {}/{{{}}}",
            result.kept.display(),
            kept_entries(&result.kept).join(",")
        );
        let _ = writeln!(out, "  rerun:    {}", result.rerun);
    }
    out
}

/// The lines of a `FAIL` block about one check whose expectation did not hold (`run` and `check`
/// print the same): each mismatch, what was found (the verdict, the row counts, every repeat with
/// its cause, every missing message), and `step`, where the check was made.
pub fn failed_check(c: &CheckResult, step: &str) -> String {
    let mut out = String::new();
    if let Some(note) = &c.terminal_note {
        let _ = writeln!(out, "  note:     {note}");
    }
    let _ = writeln!(out, "  check:    {}", c.check.at);
    for m in &c.mismatches {
        let _ = writeln!(out, "  finding:  {m}");
    }
    let _ = writeln!(out, "  got:      {}", c.verdict);
    if let Some(rows) = &c.row_counts {
        let _ = writeln!(out, "  rows:     {}", wording::rows_line(rows));
    }
    for r in &c.check.repeats {
        let _ = writeln!(out, "  repeat:   {}", wording::repeat_line(r));
        let _ = writeln!(out, "  cause:    {}", wording::cause_line(r));
    }
    for m in &c.check.missing {
        let _ = writeln!(out, "  missing:  {}", wording::missing_line(m));
    }
    for m in &c.check.taken_back {
        let _ = writeln!(out, "  taken back, shown: {}", wording::missing_line(m));
    }
    let _ = writeln!(
        out,
        "  step:     {step}; session {}, {} stored rows, {} logical messages",
        c.session, c.stored_rows, c.logical_messages
    );
    out
}

/// The names in the kept directory (directories with a trailing `/`), sorted.
fn kept_entries(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if e.path().is_dir() {
                name + "/"
            } else {
                name
            }
        })
        .collect();
    names.sort();
    names
}

/// Replaces what differs from run to run (session ids, paths, ports, timings, token counts) with
/// fixed placeholders, so snapshots of a rendered history compare equal across runs and machines.
pub fn redact(text: &str) -> String {
    use std::sync::OnceLock;
    static RULES: OnceLock<Vec<(regex::Regex, &'static str)>> = OnceLock::new();
    let rules = RULES.get_or_init(|| {
        [
            (r"\d{8}_\d{6}_[0-9a-f]{6}", "[SESSION]"),
            (r"127\.0\.0\.1:\d+", "127.0.0.1:[PORT]"),
            (r"(/[\w.+-]+)+/hermes-e2e/\S*", "[PATH]"),
            (r"/tmp/[\w./+-]*", "[PATH]"),
            (r"\b\d+(\.\d+)?[KM]?/\d+(\.\d+)?[KM]\b", "[TOKENS]"),
            (r"\b\d+(\.\d+)?\s?(ms|s|m)\b", "[TIME]"),
            (r"\b\d{1,3}%", "[PCT]"),
            // Token estimates depend on ids and paths in the system prompt.
            (r"~[\d,]+ tokens", "~[N] tokens"),
            (r"~[\d,]+ →", "~[N] →"),
            // The TUI's status bar ends with its working directory, cut from the left to the
            // room the git branch leaves, and the branch (none on a detached HEAD, as in a CI
            // checkout of a commit): the directory lies in the harness's checkout, so both
            // depend on where and on which branch it is checked out.
            (r"(?m)…\S*/work(?: \([\w./+-]+\))?$", "…[CWD] ([BRANCH])"),
            (r"(?m)(/work) \([\w./+-]+\)$", "$1 ([BRANCH])"),
        ]
        .into_iter()
        .map(|(re, to)| (regex::Regex::new(re).expect("valid redaction regex"), to))
        .collect()
    });
    let mut out = text.to_owned();
    for (re, to) in rules {
        out = re.replace_all(&out, *to).into_owned();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_hides_what_varies_between_runs() {
        let text = "⚙️  /resume 20261203_081113_dbbb5b\n     Approx request size: ~13,904 → ~13,872 tokens\n\
                    http://127.0.0.1:40123/v1 took 1.5 s\n─ …rotating_resume/work (r12-run)\n─ /x/work (main)\n\
                    1 session      ─ …tory/tui_undo_rotating/work";
        assert_eq!(
            redact(text),
            "⚙️  /resume [SESSION]\n     Approx request size: ~[N] → ~[N] tokens\n\
             http://127.0.0.1:[PORT]/v1 took [TIME]\n─ …[CWD] ([BRANCH])\n─ /x/work ([BRANCH])\n\
             1 session      ─ …[CWD] ([BRANCH])"
        );
    }

    #[test]
    fn printable_escapes_control_characters_only() {
        assert_eq!(
            printable("a\tb\nc\u{1b}[2J\u{7}é"),
            "a\tb\nc\\u{1b}[2J\\u{7}é"
        );
    }
}
