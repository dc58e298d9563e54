//! A `say` step's paced stream and `during` actions: syntax and validation.
//!
//! A `say` step's paced stream (`stream = { chunk_chars, delay_ms }`) and the actions it runs
//! while the reply streams (`during = [ … ]`): their raw TOML shape and strict validation.
//!
//! ```toml
//! [[step]]
//! say = "Tell me about the lighthouse keeper."
//! reply = "…"
//! stream = { chunk_chars = 10, delay_ms = 30 }   # the fake model's pace
//! during = [
//!   { after_word = "t2w040", drag = ["110x24", "95x24", "80x24"], gap_ms = 50 },
//!   { after_ms = 800, resize = "70x24" },
//!   { after_word = "lens", key = "ctrl-c" },              # ctrl-c | escape | enter
//!   { after_word = "dusk", type = "and the fog?" },        # typed ahead, not sent
//!   { after_word = "wick", type = "and the fog?\n" },      # … sent: a final `\n` is Enter
//!   { after_word = "ships", command = "/queue What about fog?", reply = "…" },
//!   { after_ms = 1500, kill = true },                     # SIGKILL: the client dies here
//!   { after_word = "fog", paste = "one\ntwo\nthree\n", reply = "…" },  # pasted, then Enter
//! ]
//! ```
//!
//! Entries run in order, each once: its trigger is awaited after the previous entry's action.
//! Triggers: `after_word` — the word (a word of the reply that occurs in it once, and not in what
//! the user typed) is drawn on the screen, anywhere (a line of the reply, or the client's preview
//! of the line it is still receiving); `after_ms` — that many milliseconds after the turn's first
//! chat request reached the fake model. A `type` ending in `\n` or a `command` may carry `reply`:
//! the fake model's answer to the message it submits (the text typed, or the command's argument:
//! `/queue What about fog?` submits `What about fog?`); the step then also waits for that reply.
//! `kill = true` SIGKILLs the client and everything it started (a crash, a closed terminal, the
//! machine going down mid-turn or mid-tool: `after_ms` counts from the turn's first chat request,
//! so with `tools` it can land while a tool runs); it must be the last entry, the step ends there
//! and the run goes on with the next `launch`.
//! A `paste` (several lines, written in one write as a terminal pastes: see
//! [`crate::terminal::Behaviour`]) needs `reply`, the model's answer to the text sent as one
//! message; Enter follows it (a person sending what they pasted), and the step ends when the
//! client is idle and its output settled — however many messages it made of the text.
//!
//! A `launch` step takes `during` too (`launch_entries`): `after_word` triggers only (a word the
//! client draws while it starts, e.g. from a resumed session's recap; counted from the launch) and
//! `resize` or `drag` actions only — the terminal resized while the client draws its first screen.

use serde::Deserialize;

use super::ScenarioError;
use crate::provider::Pace;
use crate::terminal::Size;

/// One action a `say` step runs while its reply streams, and when.
#[derive(Debug, Clone, PartialEq)]
pub struct During {
    /// When the action runs.
    pub(crate) trigger: Trigger,
    /// What it does.
    pub(crate) action: DuringAction,
}

/// When a [`During`] action runs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Trigger {
    /// Once this word of the reply is drawn on the screen.
    AfterWord(String),
    /// This many milliseconds after the turn's first chat request reached the fake model.
    AfterMs(u64),
}

/// What a [`During`] entry does.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum DuringAction {
    /// Resize the terminal once.
    Resize(Size),
    /// Resize the terminal to each size in turn, `gap_ms` apart (a drag of the window's edge).
    Drag {
        /// The sizes, in order.
        sizes: Vec<Size>,
        /// Milliseconds between two resizes.
        gap_ms: u64,
    },
    /// Press a key.
    Key(Key),
    /// Type text into the composer; a final `\n` is Enter (the text is then submitted).
    Type {
        /// The text, with its final `\n` if any.
        text: String,
        /// The fake model's reply to the submitted text.
        reply: Option<String>,
    },
    /// Paste several lines in one write, then press Enter.
    Paste {
        /// The text, with its line breaks.
        text: String,
        /// The fake model's reply to the text sent as one message.
        reply: String,
    },
    /// Type a slash command and press Enter.
    Command {
        /// The command line, e.g. `/queue What about fog?`.
        text: String,
        /// The fake model's reply to the message the command submits (its argument).
        reply: Option<String>,
    },
    /// SIGKILL the client and every process it started; the step ends there (the last entry).
    Kill,
}

impl DuringAction {
    /// The message this action submits to the model with a scripted reply: (user text, reply).
    pub(crate) fn scripted_turn(&self) -> Option<(String, String)> {
        match self {
            DuringAction::Type {
                text,
                reply: Some(reply),
            } => Some((text.trim().to_owned(), reply.clone())),
            DuringAction::Paste { text, reply } => {
                Some((super::pasted_message(text), reply.clone()))
            }
            DuringAction::Command {
                text,
                reply: Some(reply),
            } => {
                let argument = text.trim().split_once(char::is_whitespace)?.1.trim();
                Some((argument.to_owned(), reply.clone()))
            }
            _ => None,
        }
    }
}

/// A key a [`During`] entry presses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub(crate) enum Key {
    /// Ctrl-C (`\x03`): the client interrupts the running turn.
    #[serde(rename = "ctrl-c")]
    CtrlC,
    /// Escape (`\x1b`).
    #[serde(rename = "escape")]
    Escape,
    /// Enter (`\r`).
    #[serde(rename = "enter")]
    Enter,
}

impl Key {
    /// The bytes the terminal sends for the key.
    pub(crate) fn bytes(self) -> &'static [u8] {
        match self {
            Key::CtrlC => b"\x03",
            Key::Escape => b"\x1b",
            Key::Enter => b"\r",
        }
    }
}

/// `stream = { … }` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPace {
    chunk_chars: usize,
    delay_ms: u64,
}

/// One `during` entry as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDuring {
    after_word: Option<String>,
    after_ms: Option<u64>,
    resize: Option<String>,
    drag: Option<Vec<String>>,
    gap_ms: Option<u64>,
    key: Option<Key>,
    #[serde(rename = "type")]
    type_text: Option<String>,
    command: Option<String>,
    paste: Option<String>,
    reply: Option<String>,
    kill: Option<bool>,
}

/// The pace of `stream = { … }`: 1..=10000 characters a chunk, at most 10 s between chunks.
pub(super) fn pace(
    line: usize,
    raw: &RawPace,
    invalid: &impl Fn(usize, String) -> ScenarioError,
) -> Result<Pace, ScenarioError> {
    if !(1..=10_000).contains(&raw.chunk_chars) || raw.delay_ms > 10_000 {
        return Err(invalid(
            line,
            format!(
                "`stream` needs 1..=10000 `chunk_chars` and at most 10000 `delay_ms`, got {} and {}",
                raw.chunk_chars, raw.delay_ms
            ),
        ));
    }
    Ok(Pace {
        chunk_chars: raw.chunk_chars,
        delay: std::time::Duration::from_millis(raw.delay_ms),
    })
}

/// The `during` entries of a `say` step whose user text is `said` and reply `reply`, validated.
pub(super) fn entries(
    line: usize,
    raw: &[RawDuring],
    said: &str,
    reply: &str,
    invalid: &impl Fn(usize, String) -> ScenarioError,
) -> Result<Vec<During>, ScenarioError> {
    raw.iter()
        .enumerate()
        .map(|(n, entry)| {
            let bad =
                |message: String| invalid(line, format!("`during` entry {}: {message}", n + 1));
            if entry.kill.is_some() && n + 1 < raw.len() {
                return Err(bad(
                    "`kill` must be the last entry: nothing runs after the client is killed".into(),
                ));
            }
            Ok(During {
                trigger: trigger(entry, said, reply, &bad)?,
                action: action(entry, &bad)?,
            })
        })
        .collect()
}

/// The entries of a `launch` step's `during`: `after_word` triggers (one word, drawn by the
/// client while it starts: a recap's) and `resize` or `drag` actions only.
pub(super) fn launch_entries(
    line: usize,
    raw: &[RawDuring],
    invalid: &impl Fn(usize, String) -> ScenarioError,
) -> Result<Vec<During>, ScenarioError> {
    raw.iter()
        .enumerate()
        .map(|(n, entry)| {
            let bad = |message: String| {
                invalid(
                    line,
                    format!("`during` entry {} of a `launch`: {message}", n + 1),
                )
            };
            let trigger = match (&entry.after_word, entry.after_ms) {
                (Some(word), None) if is_one_word(word) => Trigger::AfterWord(word.clone()),
                _ => return Err(bad("needs `after_word = \"WORD\"` (one word)".into())),
            };
            let action = action(entry, &bad)?;
            if !matches!(action, DuringAction::Resize(_) | DuringAction::Drag { .. }) {
                return Err(bad("a `launch` takes only `resize` or `drag`".into()));
            }
            Ok(During { trigger, action })
        })
        .collect()
}

/// Whether `word` is one word: letters and digits, at least one.
fn is_one_word(word: &str) -> bool {
    !word.is_empty() && word.chars().all(char::is_alphanumeric)
}

/// The trigger of an entry: exactly one of `after_word`, `after_ms`.
fn trigger(
    entry: &RawDuring,
    said: &str,
    reply: &str,
    bad: &impl Fn(String) -> ScenarioError,
) -> Result<Trigger, ScenarioError> {
    match (&entry.after_word, entry.after_ms) {
        (Some(word), None) => {
            if !is_one_word(word) {
                return Err(bad(format!(
                    "`after_word = \"{word}\"` must be one word (letters and digits)"
                )));
            }
            let in_reply = count_word(reply, word);
            if in_reply != 1 {
                return Err(bad(format!(
                    "`after_word = \"{word}\"` must occur once in the reply, it occurs {in_reply} times"
                )));
            }
            if count_word(said, word) > 0 {
                return Err(bad(format!(
                    "`after_word = \"{word}\"` is also in what the user types (its echo would trigger it)"
                )));
            }
            Ok(Trigger::AfterWord(word.clone()))
        }
        (None, Some(ms)) if ms <= 600_000 => Ok(Trigger::AfterMs(ms)),
        (None, Some(ms)) => Err(bad(format!("`after_ms = {ms}`: at most 600000"))),
        _ => Err(bad(
            "needs exactly one trigger: `after_word = \"WORD\"` or `after_ms = N`".into(),
        )),
    }
}

/// A `paste` entry: its text and the model's answer to it sent as one message.
fn paste_action(
    text: &str,
    reply: Option<&str>,
    bad: &impl Fn(String) -> ScenarioError,
) -> Result<DuringAction, ScenarioError> {
    let reply = reply.unwrap_or_default();
    if super::pasted_message(text).is_empty() || reply.trim().is_empty() {
        return Err(bad(
            "`paste` needs text and `reply` (the model's answer to it sent as one message)".into(),
        ));
    }
    Ok(DuringAction::Paste {
        text: text.to_owned(),
        reply: reply.to_owned(),
    })
}

/// The action of an entry: exactly one of `resize`, `drag`, `key`, `type`, `command`, `paste`,
/// `kill`; `gap_ms` only with `drag`, `reply` only with a `paste`, a `type` that ends in `\n` or
/// a `command`.
fn action(
    entry: &RawDuring,
    bad: &impl Fn(String) -> ScenarioError,
) -> Result<DuringAction, ScenarioError> {
    let named = [
        entry.resize.is_some(),
        entry.drag.is_some(),
        entry.key.is_some(),
        entry.type_text.is_some(),
        entry.command.is_some(),
        entry.kill.is_some(),
        entry.paste.is_some(),
    ];
    if named.iter().filter(|a| **a).count() != 1 {
        return Err(bad(
            "needs exactly one action: `resize`, `drag`, `key`, `type`, `command`, `paste` or \
             `kill`"
                .into(),
        ));
    }
    if entry.kill == Some(false) {
        return Err(bad("`kill = false` is not an action; remove it".into()));
    }
    if let Some(text) = &entry.paste {
        return paste_action(text, entry.reply.as_deref(), bad);
    }
    if entry.gap_ms.is_some() != entry.drag.is_some() {
        return Err(bad("`drag` and `gap_ms` go together".into()));
    }
    let submits = entry.command.is_some()
        || entry
            .type_text
            .as_deref()
            .is_some_and(|t| t.ends_with('\n'));
    if entry.reply.is_some() && !submits {
        return Err(bad(
            "`reply` belongs to a `command` or a `type` that ends in `\\n` (Enter)".into(),
        ));
    }
    let reply = entry.reply.clone();
    if reply.as_deref().is_some_and(|r| r.trim().is_empty()) {
        return Err(bad("`reply` must not be empty".into()));
    }
    if let Some(size) = &entry.resize {
        return Ok(DuringAction::Resize(size_of(size, bad)?));
    }
    if let Some(sizes) = &entry.drag {
        if sizes.len() < 2 {
            return Err(bad("`drag` needs at least two sizes".into()));
        }
        let sizes = sizes
            .iter()
            .map(|s| size_of(s, bad))
            .collect::<Result<_, _>>()?;
        let gap_ms = entry.gap_ms.unwrap_or_default();
        if gap_ms > 10_000 {
            return Err(bad(format!("`gap_ms = {gap_ms}`: at most 10000")));
        }
        return Ok(DuringAction::Drag { sizes, gap_ms });
    }
    if let Some(key) = entry.key {
        return Ok(DuringAction::Key(key));
    }
    if entry.kill.is_some() {
        return Ok(DuringAction::Kill);
    }
    if let Some(text) = &entry.type_text {
        if text.trim().is_empty() || text.trim_end_matches('\n').contains('\n') {
            return Err(bad(
                "`type` needs text on one line (a final `\\n` is Enter)".into(),
            ));
        }
        return Ok(DuringAction::Type {
            text: text.clone(),
            reply,
        });
    }
    let text = entry.command.clone().unwrap_or_default();
    if !text.starts_with('/') || text.contains('\n') {
        return Err(bad(format!(
            "`command = \"{text}\"` must be one line starting with `/`"
        )));
    }
    let action = DuringAction::Command { text, reply };
    if action.scripted_turn().is_none() && entry.reply.is_some() {
        return Err(bad(
            "`reply` needs a command with an argument (the message it submits)".into(),
        ));
    }
    Ok(action)
}

/// A `COLSxROWS` size within a scenario's bounds.
fn size_of(text: &str, bad: &impl Fn(String) -> ScenarioError) -> Result<Size, ScenarioError> {
    let size: Size = text
        .parse()
        .map_err(|_| bad(format!("`{text}`: expected `COLSxROWS`, e.g. `80x24`")))?;
    if !(10..=1000).contains(&size.rows) || !(40..=1000).contains(&size.cols) {
        return Err(bad(format!(
            "`{text}`: sizes must be 40..=1000 cols and 10..=1000 rows"
        )));
    }
    Ok(size)
}

/// How often `word` occurs in `text` as a whole word (split at anything not a letter or digit).
pub(crate) fn count_word(text: &str, word: &str) -> usize {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| *w == word)
        .count()
}
