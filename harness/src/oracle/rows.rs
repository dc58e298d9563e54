//! Row counts the word-level findings do not count.
//!
//! Row counts: what the rendered history shows that the word-level findings do not count — the
//! client's stale status-bar previews, its idle prompt, runs of blank rows, and how often each
//! question appears. Upstream Hermes Agent's resize test (`tests/e2e/core/cli_tmux/
//! test_resize_scrollback.py`, #95375) asserts these on tmux's `capture-pane -p -J -S -`; here they
//! are counted on the same kind of text: the checkpoint's history, soft-wrapped rows joined and
//! nothing stripped ([`crate::terminal::Emulator::history_lines`]), because the transcript the
//! oracle reads drops the prompt and collapses blank runs.
//!
//! A scenario pins them only where it names them (`expect = { prompt_rows = 1, … }`): a live
//! screen shows its prompt, a finished one does not, so they have no default.

use crate::client::chrome::{PREVIEW, PROMPT};

/// The row counts of one checkpoint's history (see the module docs). Field names are the public
/// names (scenario files, `--json`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RowCounts {
    /// Lines that start (after indentation) with `…`: the classic CLI's status-bar preview of the
    /// reply line being streamed, left behind in the history when the terminal re-wrapped or
    /// clipped it (upstream allows at most one per mid-stream resize).
    pub stale_preview_rows: usize,
    /// Lines that start (after indentation) with the prompt marker `❯`: one while the client is
    /// idle at its prompt; more is a prompt row left in the history.
    pub prompt_rows: usize,
    /// The longest run of blank lines, not counting the blank rows below the last written line
    /// (the unused part of the screen). The classic CLI's own spacing is at most 2.
    pub max_blank_run: usize,
    /// Questions (the user messages the provider received) not shown exactly once: counted as
    /// occurrences of the question's text, whitespace collapsed, in the history with its lines
    /// joined by a space.
    pub questions_not_once: usize,
}

impl RowCounts {
    /// Every row count's public name, in field order.
    pub(crate) const NAMES: [&'static str; 4] = [
        "stale_preview_rows",
        "prompt_rows",
        "max_blank_run",
        "questions_not_once",
    ];

    /// The counts as `(public name, value)` pairs, in field order.
    pub(crate) fn named(&self) -> [(&'static str, usize); 4] {
        let [a, b, c, d] = Self::NAMES;
        [
            (a, self.stale_preview_rows),
            (b, self.prompt_rows),
            (c, self.max_blank_run),
            (d, self.questions_not_once),
        ]
    }
}

/// Whether `line` is a status-bar preview row: indented, then `…` and a space (the classic CLI's
/// spinner text `f"… {preview}"`, drawn as `  …  t2w033 t2w034`). A line of text that merely
/// begins with `…` is not one.
pub fn is_stale_preview(line: &str) -> bool {
    let rest = line.trim_start();
    rest.len() < line.len()
        && rest
            .strip_prefix(PREVIEW)
            .is_some_and(|after| after.starts_with(char::is_whitespace))
}

/// The row counts of `history` (joined lines, nothing stripped, oldest first), where `questions`
/// are the texts the user sent.
pub fn count_rows(history: &[String], questions: &[String]) -> RowCounts {
    let written = history
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(0, |last| last + 1);
    let history = &history[..written];
    let mut max_blank_run = 0;
    let mut run = 0;
    for line in history {
        run = if line.trim().is_empty() { run + 1 } else { 0 };
        max_blank_run = max_blank_run.max(run);
    }
    let joined = squash(&history.join(" "));
    let questions_not_once = questions
        .iter()
        .map(|q| squash(q))
        .filter(|q| q.is_empty() || joined.matches(q.as_str()).count() != 1)
        .count();
    RowCounts {
        stale_preview_rows: history.iter().filter(|l| is_stale_preview(l)).count(),
        prompt_rows: history
            .iter()
            .filter(|l| l.trim_start().starts_with(PROMPT))
            .count(),
        max_blank_run,
        questions_not_once,
    }
}

/// `text` with every run of whitespace made one space, trimmed.
fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
