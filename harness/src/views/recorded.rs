//! A saved recording cut into views.
//!
//! A saved recording cut into views (`check --cast`): the steps come from the recording itself,
//! and what `state.db` held at each step from the rows' timestamps. `docs/views.md` ("Saved
//! recordings") has the rules and what they were measured against.
//!
//! **Where the views start.** At the recording's input events (`i`, what `asciinema rec
//! --stdin` and the harness record) when it has them: each line the user typed and sent starts a
//! view (a slash command by its name, as [`ViewKind::of_command`] says; anything else is a
//! `say`), at the event where its typing began ([`from_input`]). Without input events, at the
//! classic CLI's own echo of what was sent — the `● TEXT` line it prints for a message, the
//! `⚙️  /COMMAND` line for a command — from the burst of output that drew it ([`from_markers`]).
//! A resize (`r`) starts a view when the client was idle — no row was made after it before the
//! next line was sent — and belongs to the view it came in otherwise (a drag while a reply
//! streams is part of that reply's view). The launch's view is a recap when the header's
//! `command` resumes (`--resume`, `-c`) or, without one, when the client drew its resume notice
//! (`↻ Resumed session …`, `cli.resume.resumed_session …`) before the first step. The Ink TUI
//! (it repaints its whole frame inside synchronized updates, `CSI ? 2026 h`) is not cut: it is
//! judged whole, as a live check of it is; so is a recording with nothing sent after its launch.
//!
//! **When each step was sent, on the database's clock.** A recording carries only the final
//! `state.db`. A row's `timestamp` is when its message was made, never later than its write (a
//! copy keeps its original's), and rows get ids in write order; so the rows made before a step
//! was sent are those below the first row whose timestamp is not earlier (`Before`). The
//! recording's clock is set against the database's by the steps that sent a message (a `say`,
//! `/queue TEXT`, `/steer TEXT`): the user row holding the text was made once the step was sent,
//! so the offset is the smallest `row timestamp − send time` over them, and at most a second past
//! the header's `timestamp` (whole seconds, and never late). Without one, the header's
//! `timestamp` sets it. A line's row is looked for from [`ECHO_LATE`] before it was sent: an
//! echo may reach the recording after the row was stored.
//!
//! **The database each view was drawn from.** An in-memory copy as of the view's end
//! ([`Store::as_of`]): without the rows made after it, and with the rows taken back after it —
//! or superseded only by copies made after it — live again; the database is first taken as it
//! was when the recording ended ([`at_end`]: rows made later are another process's). `/retry`,
//! `/undo N` and `/rollback N` take back the questions they name from the end of the current
//! session, as the client's `rewind_to_message` does (`taken_back_by`). Each view is then judged
//! by its kind's [`Rules`]; a line typed while a reply streams (`/queue`, `/steer`) may draw the
//! rest of that reply once more.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use super::{judge_by, next_start, say_name, unjudged, Before, Erased, Judged, Rules, ViewKind};
use crate::oracle::Said;
use crate::store::{Stamp, Store, StoreError};
use crate::terminal::cast::{Event, Recording};
use crate::terminal::{Emulator, Size, Transcript};
use crate::verdict::Basis;
use keys::Key;

mod keys;

/// Where a recording's views were cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cut {
    /// At each line the user sent, from the recording's input events.
    InputEvents,
    /// At the client's echo of each message and command sent (the recording has no input).
    ClientMarkers,
    /// Not cut: judged whole (a recording of the Ink TUI, one with no step after its launch, or
    /// one whose clock cannot be set against the database's).
    Whole,
}

/// One step of a recording: what starts a view.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The view it starts.
    pub(crate) kind: ViewKind,
    /// The step as a report names it (`say "What did…"`, `/history`, `resize 60x40`).
    pub(crate) name: String,
    /// The event where its view starts (indexes [`Recording::events`]).
    pub(crate) event: usize,
    /// When it was sent, in the recording's seconds (the Enter; the echo; the resize).
    pub(crate) sent: f64,
    /// What a `say` sent, as far as the recording shows it.
    pub(crate) said: Option<String>,
    /// A resize: a view of its own only when the client was idle (see [`judge`]).
    pub(crate) resize: bool,
}

/// A recording's steps, the launch first, and where they came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Steps {
    /// Where the views were cut.
    pub(crate) cut: Cut,
    /// The steps: the launch (event 0) first.
    pub steps: Vec<Step>,
}

/// A recording judged as views.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// Where the views were cut.
    pub(crate) cut: Cut,
    /// The views judged, in screen order; empty when [`Cut::Whole`].
    pub views: Vec<Judged>,
    /// Why the recording was judged whole, when it was.
    pub(crate) whole_because: Option<&'static str>,
    /// A screen without timing (`check --screen`), not a recording.
    pub(crate) screen: bool,
}

impl Recorded {
    /// One line saying how the recording was cut, for `check`'s output.
    pub(crate) fn note(&self) -> String {
        let resizes = self
            .views
            .iter()
            .filter(|v| v.step.starts_with("resize "))
            .count();
        let and_resizes = match resizes {
            0 => String::new(),
            1 => " and at an idle resize".to_owned(),
            n => format!(" and at {n} idle resizes"),
        };
        match self.cut {
            Cut::InputEvents => format!(
                "views: {}, cut at each line sent (the recording's input events){and_resizes}",
                self.views.len()
            ),
            Cut::ClientMarkers => format!(
                "views: {}, cut at the client's echo of each line sent ({}){and_resizes}",
                self.views.len(),
                if self.screen {
                    "a screen has no input events"
                } else {
                    "the recording has no input events"
                }
            ),
            Cut::Whole => format!(
                "views: one, the whole recording ({})",
                self.whole_because.unwrap_or("one view")
            ),
        }
    }
}

/// A line of input the user sent: a step.
fn step_of_line(text: &str, event: usize, sent: f64) -> Step {
    let text = text.trim();
    if text.starts_with('/') {
        Step {
            kind: ViewKind::of_command(text),
            name: text.to_owned(),
            event,
            sent,
            said: None,
            resize: false,
        }
    } else {
        say(text, event, sent)
    }
}

/// A message the user sent: a step.
fn say(text: &str, event: usize, sent: f64) -> Step {
    Step {
        kind: ViewKind::Exchange,
        name: say_name(text),
        event,
        sent,
        said: Some(text.to_owned()),
        resize: false,
    }
}

/// A resize of the terminal to `size` at event `event`: a step when the client was idle.
fn resize(size: Size, event: usize, sent: f64) -> Step {
    Step {
        kind: ViewKind::Exchange,
        name: format!("resize {size}"),
        event,
        sent,
        said: None,
        resize: true,
    }
}

/// The launch's step: a recap when the header's command resumes, else a start (a recap when the
/// client drew its resume notice, [`judge`] finds).
fn launch(recording: &Recording) -> Step {
    let kind = recording.command.as_deref().map_or(ViewKind::Start, |c| {
        let args: Vec<String> = c.split_whitespace().map(str::to_owned).collect();
        ViewKind::of_launch(&args)
    });
    Step {
        kind,
        name: recording
            .command
            .clone()
            .map_or_else(|| "launch".to_owned(), |c| format!("launch {c}")),
        event: 0,
        sent: 0.0,
        said: None,
        resize: false,
    }
}

/// Input events closer than this are read as one stream of bytes: a terminal's reply split
/// across two events (they come a millisecond apart) is one reply. Further apart, an event's
/// unfinished sequence is a lone Escape, not the start of one the next keypress would finish.
const JOINED_INPUT_SECS: f64 = 0.02;

/// The keys of `recording`'s input events, each with the index of the event it starts in
/// (`None` when it has no input event). Events [`JOINED_INPUT_SECS`] apart or closer are read
/// joined.
fn input_keys(recording: &Recording) -> Option<Vec<(Key, usize)>> {
    let mut out = Vec::new();
    let mut input = String::new();
    let mut starts: Vec<(usize, usize)> = Vec::new();
    let read = |input: &mut String, starts: &mut Vec<(usize, usize)>, out: &mut Vec<_>| {
        let event_at = |offset: usize| {
            let k = starts.partition_point(|&(at, _)| at <= offset);
            starts[k.saturating_sub(1)].1
        };
        out.extend(
            keys::keys(input)
                .into_iter()
                .map(|(key, at)| (key, event_at(at))),
        );
        input.clear();
        starts.clear();
    };
    let mut last: Option<f64> = None;
    let mut any = false;
    for (i, timed) in recording.events.iter().enumerate() {
        if let Event::Input(keys) = &timed.event {
            if last.is_some_and(|t| timed.time - t > JOINED_INPUT_SECS) {
                read(&mut input, &mut starts, &mut out);
            }
            starts.push((input.len(), i));
            input.push_str(keys);
            last = Some(timed.time);
            any = true;
        }
    }
    read(&mut input, &mut starts, &mut out);
    any.then_some(out)
}

/// The steps of `recording` from its input events (`None` when it has none): each line sent
/// starts a view where its typing began. The terminal's replies to the client's queries, which a
/// recorder capturing input writes as input too, are not typing (`views/recorded/keys.rs`).
pub(crate) fn from_input(recording: &Recording) -> Option<Vec<Step>> {
    let keys = input_keys(recording)?;
    let mut keys = keys.into_iter().peekable();
    let mut steps = vec![launch(recording)];
    let mut line = String::new();
    // Where the line being typed began, and whether keys were pressed that the recording does
    // not spell out (history recall, completion).
    let mut began: Option<usize> = None;
    let mut unspelled = false;
    let mut pasting = false;
    for (i, timed) in recording.events.iter().enumerate() {
        if let Event::Resize(size) = &timed.event {
            steps.push(resize(*size, i, timed.time));
            continue;
        }
        while let Some((key, _)) = keys.next_if(|&(_, at)| at == i) {
            match key {
                Key::Reply | Key::Ignored => {}
                Key::PasteStart => pasting = true,
                Key::PasteEnd => pasting = false,
                Key::Unspelled => {
                    unspelled = true;
                    began.get_or_insert(i);
                }
                Key::Enter if pasting => {
                    began.get_or_insert(i);
                    line.push('\n');
                }
                Key::Enter => {
                    if !line.trim().is_empty() {
                        steps.push(step_of_line(&line, began.unwrap_or(i), timed.time));
                    } else if unspelled {
                        steps.push(Step {
                            kind: ViewKind::Exchange,
                            name: "input the recording does not spell out".to_owned(),
                            event: began.unwrap_or(i),
                            sent: timed.time,
                            said: None,
                            resize: false,
                        });
                    }
                    line.clear();
                    began = None;
                    unspelled = false;
                }
                Key::Backspace => {
                    line.pop();
                }
                // Ctrl-C: an interrupt, or the line cleared.
                Key::Interrupt => {
                    line.clear();
                    began = None;
                    unspelled = false;
                }
                Key::Char(c) => {
                    began.get_or_insert(i);
                    line.push(c);
                }
            }
        }
    }
    Some(steps)
}

/// What the classic CLI's echo of a sent line says, from a raw history line: `● TEXT` for a
/// message, `⚙️  /COMMAND` for a command (the resume recap's `│ ● You: …` lines sit in a panel).
fn echo(line: &str) -> Option<(bool, &str)> {
    if let Some(text) = line.strip_prefix("● ") {
        return Some((false, text.trim()));
    }
    let rest = line.strip_prefix('⚙')?;
    let command = rest.trim_start_matches('\u{fe0f}').trim_start();
    command
        .starts_with('/')
        .then_some((true, command.trim_end()))
}

/// The steps of `recording` from the client's echo of each line sent, replayed into `E`: a step
/// starts with the burst of output that drew a new echo (the client answers Enter at once; the
/// burst is the run of output events each within `BURST` (50 ms) of the last). An echo is new when
/// it is not one the history already held: the echoes are matched in order with the last
/// ones seen (a longest common subsequence), so a clear and repaint (`/redraw`) that draws the
/// same echoes again starts nothing, and the same question asked again does ([`new_echoes`]:
/// also a repaint caught half-drawn). A clear that reached the recording alone just before the
/// burst starts the step with it.
///
/// Also returns the screen the whole recording drew (it was replayed once for this).
pub(crate) fn from_markers<E: Emulator>(recording: &Recording) -> (Vec<Step>, E) {
    let mut steps = vec![launch(recording)];
    let mut screen: E = recording.screen();
    let mut known: Vec<(bool, String)> = Vec::new();
    // Where the current burst of output began.
    let mut burst = 0;
    let mut last_output = f64::NEG_INFINITY;
    for (i, timed) in recording.events.iter().enumerate() {
        recording.play(&mut screen, i..i + 1);
        let data = match &timed.event {
            Event::Output(data) => data,
            Event::Resize(size) => {
                steps.push(resize(*size, i, timed.time));
                continue;
            }
            _ => continue,
        };
        // A screen has no timing: each line is its own event, and the echo's starts its step.
        if timed.time - last_output > BURST || !recording.timed() {
            burst = i;
        }
        last_output = timed.time;
        // An echo this event drew starts a line, and is on the screen now: only then is the
        // history read.
        if !may_echo(data) || !screen.viewport_rows().iter().any(|r| echo(r).is_some()) {
            continue;
        }
        let found: Vec<(bool, String)> = screen
            .history_lines()
            .iter()
            .filter_map(|l| echo(l).map(|(c, t)| (c, t.to_owned())))
            .collect();
        // The step starts with the burst, and with the clear that began it when that came
        // alone (a repaint's clear can reach the recording apart from what it draws), but
        // after the step before it.
        let floor = steps.last().map_or(0, |s| s.event + 1);
        let mut start = burst.max(floor).min(i);
        while start > floor && recording.events[start - 1].event.only_erases() {
            start -= 1;
        }
        let sent = recording.events[start].time;
        let (new, now_known) = new_echoes(&known, found);
        for (command, text) in new {
            steps.push(if command {
                step_of_line(&text, start, sent)
            } else {
                say(&text, start, sent)
            });
        }
        known = now_known;
    }
    (steps, screen)
}

/// The echoes of `found` (the history's, in order) that `known` (those seen so far) does not
/// hold, and what is known after them. When `found` holds every known echo, the new ones are
/// those a longest common subsequence leaves unmatched ([`unmatched`]). When it lost some, the
/// client is rewriting lines (a clear and repaint caught half-drawn, or one that drew its
/// lines in another order): only echoes found more often than known are new, and the lost
/// ones stay known, so the repaint's later events find them again without starting a step.
fn new_echoes<T: PartialEq + Clone>(known: &[T], found: Vec<T>) -> (Vec<T>, Vec<T>) {
    let new = unmatched(known, &found);
    if found.len() - new.len() == known.len() {
        return (new, found);
    }
    let count = |items: &[T], item: &T| items.iter().filter(|x| *x == item).count();
    let mut kept = known.to_vec();
    let mut new = Vec::new();
    for item in &found {
        if count(&found, item) > count(&kept, item) {
            kept.push(item.clone());
            new.push(item.clone());
        }
    }
    (new, kept)
}

/// Whether output `data` may draw an echo: a `⚙`, or a `●` with nothing but escape sequences
/// and blanks between it and the start of the data or of a line (a recap panel's `│ ● You:` and
/// a `●` within a line are not).
fn may_echo(data: &str) -> bool {
    use std::sync::OnceLock;
    static TAIL: OnceLock<regex::Regex> = OnceLock::new();
    let tail = TAIL.get_or_init(|| {
        regex::Regex::new(r"(?:\x1b\[[0-9;?]*[ -/]*[@-~]|[ \t])*\z").expect("valid regex")
    });
    data.contains('⚙')
        || data.match_indices('●').any(|(at, _)| {
            let before = &data[..at];
            let start = tail.find(before).map_or(at, |m| m.start());
            matches!(before[..start].chars().last(), None | Some('\n' | '\r'))
        })
}

/// How close output events follow each other within one burst (the client's answer to a key).
const BURST: f64 = 0.05;

/// The items of `now` that a longest common subsequence with `before` leaves unmatched, in order.
/// The common head and tail are matched first (an echo added at the end leaves one item to
/// compare), so the table is as large as the part that changed.
fn unmatched<T: PartialEq + Clone>(before: &[T], now: &[T]) -> Vec<T> {
    let head = before.iter().zip(now).take_while(|(a, b)| a == b).count();
    let (before, now) = (&before[head..], &now[head..]);
    let tail = before
        .iter()
        .rev()
        .zip(now.iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (before, now) = (&before[..before.len() - tail], &now[..now.len() - tail]);
    let (n, m) = (before.len(), now.len());
    // lcs[a][b]: the longest common subsequence of before[a..] and now[b..].
    let mut lcs = vec![vec![0usize; m + 1]; n + 1];
    for a in (0..n).rev() {
        for b in (0..m).rev() {
            lcs[a][b] = if before[a] == now[b] {
                lcs[a + 1][b + 1] + 1
            } else {
                lcs[a + 1][b].max(lcs[a][b + 1])
            };
        }
    }
    let (mut a, mut b) = (0, 0);
    let mut out = Vec::new();
    while b < m {
        if a < n && before[a] == now[b] {
            a += 1;
            b += 1;
        } else if a < n && lcs[a + 1][b] >= lcs[a][b + 1] {
            a += 1;
        } else {
            out.push(now[b].clone());
            b += 1;
        }
    }
    out
}

/// Whether `recording` is of the Ink TUI: it draws inside synchronized updates.
fn is_tui(recording: &Recording) -> bool {
    recording
        .events
        .iter()
        .any(|t| matches!(&t.event, Event::Output(d) if d.contains("\u{1b}[?2026h")))
}

/// The steps of `recording`, from its input events where it has them, else from the client's
/// echo (replayed into `E`: the screen the whole recording drew is returned then).
pub fn steps<E: Emulator>(recording: &Recording) -> (Steps, Option<E>) {
    if is_tui(recording) {
        let steps = Steps {
            cut: Cut::Whole,
            steps: vec![launch(recording)],
        };
        return (steps, None);
    }
    match from_input(recording) {
        Some(steps) => {
            let steps = Steps {
                cut: Cut::InputEvents,
                steps,
            };
            (steps, None)
        }
        None => {
            let (steps, screen) = from_markers::<E>(recording);
            let steps = Steps {
                cut: Cut::ClientMarkers,
                steps,
            };
            (steps, Some(screen))
        }
    }
}

/// The offset from the recording's seconds to the database's clock (unix seconds): the smallest
/// lag from a `say` being sent to its user row being made, else the header's `timestamp`.
fn clock(steps: &[Step], stamps: &[Stamp], header: Option<f64>) -> Option<f64> {
    let norm = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let users: Vec<(f64, String)> = stamps
        .iter()
        .filter_map(|s| s.user_text.as_deref().map(|t| (s.timestamp, norm(t))))
        .collect();
    let mut after = f64::MIN;
    let mut offset: Option<f64> = None;
    // The last question sent: what a `/retry` sends again; and the last row a `/retry` matched.
    let mut last: Option<String> = None;
    let mut after_retry = f64::MIN;
    for step in steps {
        // What the step sent as a message: a `say`, or the text of `/queue TEXT` and
        // `/steer TEXT` (stored as a user row once the turn in flight ends).
        let sent = step.said.clone().or_else(|| {
            let (name, text) = step.name.split_once(' ')?;
            matches!(name, "/queue" | "/steer").then(|| text.to_owned())
        });
        // `/retry` stores the last question again (0.19 and 0.22), often sooner after Enter
        // than a typed question is stored: without it, its row could fall before it was sent.
        // Only right after the question (or another `/retry`): a command between them may
        // write copies of it (0.19's compaction copies get new timestamps). Its match does not
        // move `after`, only the rows a later `/retry` may match.
        let retry = sent.is_none() && step.name == "/retry";
        if sent.is_none() && !retry && !step.resize {
            last = None;
        }
        let sent = if retry { last.clone() } else { sent };
        let Some(said) = sent.as_deref().map(norm).filter(|s| !s.is_empty()) else {
            continue;
        };
        if !retry {
            last = Some(said.clone());
        }
        // The earliest user row that holds this text (an echo may show only its start), made
        // after the last one matched and not before the step was sent by the header's clock
        // (which is at most a second early) — less [`ECHO_LATE`]: a step read from its echo
        // may have been recorded after its row was made.
        let not_before = header.map_or(f64::MIN, |h| h + step.sent - ECHO_LATE);
        let floor = if retry { after.max(after_retry) } else { after };
        let row = users
            .iter()
            .filter(|(ts, text)| {
                *ts > floor && *ts >= not_before && (*text == said || text.starts_with(&said))
            })
            .map(|(ts, _)| *ts)
            .min_by(f64::total_cmp);
        if let Some(ts) = row {
            if retry {
                after_retry = ts;
            } else {
                after = ts;
            }
            let lag = ts - step.sent;
            offset = Some(offset.map_or(lag, |o: f64| o.min(lag)));
        }
    }
    // The header's clock is at most a second early: a later offset means every step lagged.
    match (offset, header) {
        (Some(o), Some(h)) => Some(o.min(h + 1.0)),
        (o, h) => o.or(h),
    }
}

/// Places the steps of a screen without timing on the database's clock (sets each step's
/// `sent` to database seconds): a `say` when the first user row holding its text (after the
/// last one matched) was made; the launch and every command just before the next `say`, or
/// after the last row when none follows. A command that writes rows (`/retry`, `/undo`,
/// `/compress`, …) could not be told from the step before it, and a `say` the database does not
/// hold cannot be placed: the screen is judged whole then, and the error says why.
fn place(steps: &mut [Step], stamps: &[Stamp]) -> Result<(), &'static str> {
    let norm = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut after = f64::MIN;
    for step in steps.iter_mut().filter(|s| s.said.is_some()) {
        let said = norm(step.said.as_deref().unwrap_or(""));
        let row = stamps
            .iter()
            .filter(|s| s.timestamp > after)
            .find(|s| {
                s.user_text
                    .as_deref()
                    .is_some_and(|t| !said.is_empty() && norm(t).starts_with(&said))
            })
            .ok_or(
                "a message the screen shows sent is not in the database, and a screen has no \
                 timing to place its steps otherwise",
            )?;
        after = row.timestamp;
        step.sent = row.timestamp;
    }
    let mut next = f64::INFINITY;
    for step in steps.iter_mut().rev() {
        if step.said.is_some() {
            next = step.sent;
            continue;
        }
        let name = step.name.split_whitespace().next().unwrap_or("");
        let writes = takes_back(step)
            || mid_turn(step)
            || matches!(
                name,
                "/compress" | "/branch" | "/new" | "/resume" | "/clear" | "/reset" | "/fork"
            );
        if writes {
            return Err(
                "a screen has no timing, and the rows a command such as `/retry`, \
                        `/undo` or `/compress` wrote cannot be told from the step's before it",
            );
        }
        step.sent = next;
    }
    Ok(())
}

/// How much later than its user row was made a step's echo may reach the recording: the
/// client stores the row while its echo is still on the way, and a recorder under load reads
/// it late. Without this slack, a `say` whose echo came late would not set the clock, and the
/// clock set by the others would put its row in the view before it. Also how long after the
/// recording's last event a row counts as the recording's (one made as the client exits,
/// [`at_end`]).
const ECHO_LATE: f64 = 1.0;

/// Slack for the clock's rounding: a row made this close before a step was sent is the step's.
const CLOCK_SLACK: f64 = 0.001;

/// What the database held when a step was sent at `at` (database seconds): the rows below the
/// first row made at or after it.
fn before_at(stamps: &[Stamp], at: f64) -> Before {
    let first_after = stamps
        .iter()
        .filter(|s| s.timestamp >= at - CLOCK_SLACK)
        .map(|s| s.id)
        .min();
    let max_row_id = match first_after {
        Some(id) => id - 1,
        None => stamps.iter().map(|s| s.id).max().unwrap_or(0),
    };
    Before {
        max_row_id,
        uids: stamps
            .iter()
            .filter(|s| s.id <= max_row_id)
            .filter_map(|s| s.message_uid.clone())
            .collect(),
        taken_back_rows: HashSet::new(),
    }
}

/// The rows the user took back (`/undo`, `/retry`, `/rollback` set `active = 0`, leaving
/// `compacted = 0`): superseded rows no later row carries forward with their `message_uid` (an
/// in-place compaction's originals are superseded too, and copied). On databases without uids
/// every superseded row is a rewind.
fn rewound(stamps: &[Stamp]) -> HashSet<i64> {
    let mut later: HashSet<&str> = HashSet::new();
    let mut out = HashSet::new();
    for s in stamps.iter().rev() {
        let carried = s.message_uid.as_deref().is_some_and(|u| later.contains(u));
        if !s.active && !s.compacted && !carried {
            out.insert(s.id);
        }
        if let Some(u) = s.message_uid.as_deref() {
            later.insert(u);
        }
    }
    out
}

/// Each rewound row and the step that took it back. A step that takes back (`/retry`: one
/// turn; `/undo N`, `/rollback N`: N, default 1) rewinds the current session from its N-th last
/// live question on, as the client does (`rewind_to_message`): walking the session's rows down
/// from the newest one made before the step, each rewound row not yet taken back is the step's,
/// until N questions are counted or a row still live is met. A rewound row no step took was
/// taken back before the recording (`None`) when it was made before the first step, after it
/// (`usize::MAX`) otherwise.
fn taken_back_by(
    steps: &[Step],
    befores: &[Before],
    stamps: &[Stamp],
) -> Vec<(i64, Option<usize>)> {
    let rewound = rewound(stamps);
    // A rewound turn whose question was asked again later in its session (a `/retry`, or
    // `/undo` and the same question) was gone before that row was made: the row that retired it.
    let mut retired: HashMap<i64, i64> = HashMap::new();
    let mut asking: HashMap<&str, &str> = HashMap::new();
    let mut pending: Vec<(&str, &str, i64)> = Vec::new();
    for r in stamps {
        if let Some(text) = r.user_text.as_deref().map(str::trim) {
            pending.retain(|&(session, question, id)| {
                let asked_again = session == r.session_id && question == text;
                if asked_again {
                    retired.insert(id, r.id);
                }
                !asked_again
            });
            asking.insert(&r.session_id, text);
        }
        if rewound.contains(&r.id) {
            if let Some(&question) = asking.get(r.session_id.as_str()) {
                pending.push((&r.session_id, question, r.id));
            }
        }
    }
    let mut by: HashMap<i64, usize> = HashMap::new();
    for (s, step) in steps.iter().enumerate().skip(1) {
        if !takes_back(step) {
            continue;
        }
        let turns: usize = step
            .name
            .split_whitespace()
            .nth(1)
            .and_then(|n| n.parse().ok())
            .unwrap_or(1);
        let made: Vec<&Stamp> = stamps
            .iter()
            .filter(|r| r.id <= befores[s].max_row_id)
            .collect();
        let Some(newest) = made.last() else { continue };
        let mut questions = 0;
        for r in made
            .iter()
            .rev()
            .filter(|r| r.session_id == newest.session_id)
        {
            if !rewound.contains(&r.id) {
                break;
            }
            let gone = retired
                .get(&r.id)
                .is_some_and(|&at| at <= befores[s].max_row_id);
            if by.contains_key(&r.id) || gone {
                continue;
            }
            by.insert(r.id, s);
            if r.user {
                questions += 1;
                if questions == turns {
                    break;
                }
            }
        }
    }
    let mut out: Vec<(i64, Option<usize>)> = rewound
        .into_iter()
        .map(|id| {
            let at = by.get(&id).copied().or_else(|| {
                (id > befores.get(1).map_or(i64::MAX, |b| b.max_row_id)).then_some(usize::MAX)
            });
            (id, at)
        })
        .collect();
    out.sort_unstable();
    out
}

/// For each superseded row with a `message_uid`, the first later row carrying the same uid
/// forward (an in-place compaction's copy).
fn first_copies(stamps: &[Stamp]) -> HashMap<i64, i64> {
    let mut next: HashMap<&str, i64> = HashMap::new();
    let mut out = HashMap::new();
    for r in stamps.iter().rev() {
        let Some(uid) = r.message_uid.as_deref() else {
            continue;
        };
        if !r.active && !r.compacted {
            if let Some(&copy) = next.get(uid) {
                out.insert(r.id, copy);
            }
        }
        next.insert(uid, r.id);
    }
    out
}

/// Whether `step` is typed while a reply streams: `/queue` and `/steer` are for that.
fn mid_turn(step: &Step) -> bool {
    let name = step.name.split_whitespace().next().unwrap_or("");
    matches!(name, "/queue" | "/steer")
}

/// Whether step `kind`'s command takes messages back.
fn takes_back(step: &Step) -> bool {
    let name = step.name.split_whitespace().next().unwrap_or("");
    matches!(name, "/undo" | "/retry" | "/rollback")
}

/// Judges `recording` (replayed into `E`), cut at its `steps`, as views against `basis`, read
/// from `store` (the final database), with what the provider log says was `said` when there is
/// one (`check --provider-log`: tells a question asked again from a stored duplicate); see the
/// module docs. No views: judge it whole (a TUI
/// recording, one with no step after the launch, or one whose clock cannot be set); the
/// [`Recorded`] says why.
pub fn judge<E: Emulator, Er: From<StoreError>>(
    recording: &Recording,
    Steps { cut, mut steps }: Steps,
    store: &Store,
    read: impl Fn(&Store) -> Result<Option<Basis>, Er>,
    said: Option<&Said>,
) -> Result<Recorded, Er> {
    let whole = |because: &'static str| Recorded {
        cut: Cut::Whole,
        views: Vec::new(),
        whole_because: Some(because),
        screen: !recording.timed(),
    };
    if cut == Cut::Whole {
        return Ok(whole("the Ink TUI repaints its whole frame"));
    }
    let stamps = store.stamps()?;
    let offset = if recording.timed() {
        clock(&steps, &stamps, recording.timestamp)
    } else {
        match place(&mut steps, &stamps) {
            Ok(()) => Some(0.0),
            Err(because) => return Ok(whole(because)),
        }
    };
    let Some(offset) = offset else {
        return Ok(whole(
            "no message sent that the database holds and no `timestamp` in the header, so the \
             steps cannot be placed among the rows",
        ));
    };
    drop_busy_resizes(&mut steps, &stamps, offset);
    if steps.len() == 1 {
        return Ok(whole("nothing was sent after the launch"));
    }
    let (befores, bases) = befores_and_bases(&steps, &stamps, offset, store, &read)?;
    let trim = cut == Cut::ClientMarkers;
    let judged = judge_views::<E>(recording, &mut steps, (&befores, &bases), trim, said);
    Ok(Recorded {
        cut,
        views: judged,
        whole_because: None,
        screen: !recording.timed(),
    })
}

/// The database as it was when `recording` (cut into `steps`) ended, when rows were made after
/// it — the session resumed after the recording stopped: the largest row id then, and the rows
/// to make live again (superseded only by copies made later). Its views and the whole check are
/// judged against that. The end is [`ECHO_LATE`] after the last event on the database's clock:
/// by the header's `timestamp` at its latest (a second past it), else by the clock the steps set.
/// Rows are written in id order, so the first row made after the end, or written into a session
/// started after it (a later compaction's copies keep their originals' timestamps), is where the
/// later process began. `None` when no row was made after it, or the recording has no clock (a
/// screen; no `timestamp` and no message sent that the database holds).
pub(crate) fn at_end(
    recording: &Recording,
    steps: &Steps,
    store: &Store,
) -> Result<Option<(i64, Vec<i64>)>, StoreError> {
    let Some(last) = recording.events.last().filter(|_| recording.timed()) else {
        return Ok(None);
    };
    let stamps = store.stamps()?;
    let start = match (recording.timestamp, steps.cut) {
        (Some(header), _) => Some(header + 1.0),
        (None, Cut::Whole) => None,
        (None, _) => clock(&steps.steps, &stamps, None),
    };
    let Some(end) = start.map(|start| start + last.time + ECHO_LATE) else {
        return Ok(None);
    };
    let later: HashSet<String> = store
        .sessions()?
        .into_iter()
        .filter(|s| s.started_at >= end)
        .map(|s| s.id)
        .collect();
    let first_in_later = stamps
        .iter()
        .find(|s| later.contains(&s.session_id))
        .map_or(i64::MAX, |s| s.id - 1);
    let max = before_at(&stamps, end).max_row_id.min(first_in_later);
    if stamps.iter().all(|s| s.id <= max) {
        return Ok(None);
    }
    let first_copy = first_copies(&stamps);
    let live = stamps
        .iter()
        .filter(|r| r.id <= max && !r.active && !r.compacted)
        .filter(|r| first_copy.get(&r.id).is_some_and(|&copy| copy > max))
        .map(|r| r.id)
        .collect();
    Ok(Some((max, live)))
}

/// Each view's basis, by view: `None` before any session held a message.
type Bases = Vec<Option<Rc<Basis>>>;

/// What the database held as each step was sent, and after the last one (what was taken back
/// then: what the view before it showed taken back), and each view's basis ([`databases`]).
fn befores_and_bases<Er: From<StoreError>>(
    steps: &[Step],
    stamps: &[Stamp],
    offset: f64,
    store: &Store,
    read: impl Fn(&Store) -> Result<Option<Basis>, Er>,
) -> Result<(Vec<Before>, Bases), Er> {
    let mut befores: Vec<Before> = steps
        .iter()
        .map(|s| before_at(stamps, offset + s.sent))
        .collect();
    befores.push(before_at(stamps, f64::INFINITY));
    let bases = databases(steps, &befores, stamps, store, read)?;
    for (s, before) in befores.iter_mut().enumerate() {
        before.taken_back_rows = bases[s.saturating_sub(1).min(bases.len() - 1)]
            .iter()
            .flat_map(|b| &b.expected.taken_back)
            .flat_map(|t| t.rows.iter().map(|r| r.id))
            .collect();
    }
    Ok((befores, bases))
}

/// Each view's basis: the database as it was when the view ended — without the rows made
/// after, and with the rows taken back after (`taken_back_by`), or superseded only by copies made
/// after, live again; read by `read` (`None`: no session held a message yet). A view during
/// which nothing was made or taken back shares the one before it.
fn databases<Er: From<StoreError>>(
    steps: &[Step],
    befores: &[Before],
    stamps: &[Stamp],
    store: &Store,
    read: impl Fn(&Store) -> Result<Option<Basis>, Er>,
) -> Result<Bases, Er> {
    let rewound = taken_back_by(steps, befores, stamps);
    let first_copy = first_copies(stamps);
    let mut bases: Vec<Option<Rc<Basis>>> = Vec::new();
    for i in 0..steps.len() {
        let max = befores[i + 1].max_row_id;
        if i > 0 && max == befores[i].max_row_id && !takes_back(&steps[i]) {
            let last = bases.last().cloned().flatten();
            bases.push(last);
            continue;
        }
        let live: Vec<i64> = stamps
            .iter()
            .filter(|r| r.id <= max && !r.active && !r.compacted)
            .filter(
                |r| match rewound.binary_search_by_key(&r.id, |(id, _)| *id) {
                    Ok(x) => rewound[x].1.is_some_and(|at| at > i),
                    Err(_) => first_copy.get(&r.id).is_some_and(|&copy| copy > max),
                },
            )
            .map(|r| r.id)
            .collect();
        bases.push(read(&store.as_of(max, &live)?)?.map(Rc::new));
    }
    Ok(bases)
}

/// A view whose lines are drawn, waiting for the next view's start.
struct Pending {
    /// Its step's index.
    index: usize,
    /// The screen when its step was done.
    transcript: Transcript,
    /// Its first line.
    start: usize,
    /// The first history row an earlier view drew that the client rewrote (`usize::MAX`: none).
    erased_from: usize,
}

/// Each view of `steps` judged against its basis, once the next one's start is known: cut at
/// the client's echo (`trim`), the next step's typing is drawn before its echo, and on a live
/// screen it is the next view's.
fn judge_views<E: Emulator>(
    recording: &Recording,
    steps: &mut [Step],
    (befores, bases): (&[Before], &Bases),
    trim: bool,
    said: Option<&Said>,
) -> Vec<Judged> {
    let mut screen: E = recording.screen();
    let mut played = 0;
    let mut judged: Vec<Judged> = Vec::new();
    let (mut seen, mut seen_rows, mut end) = (Vec::<String>::new(), Vec::<usize>::new(), 0);
    let mut pending: Option<Pending> = None;
    for i in 0..=steps.len() {
        let transcript = if i < steps.len() {
            let stop = steps.get(i + 1).map_or(recording.events.len(), |n| n.event);
            recording.play(&mut screen, played..stop.max(played));
            played = stop.max(played);
            // The header's command (when it has one: asciinema 2.4 writes none even with `-c`)
            // may not say it resumed (a shell, an alias): the client's own notice does.
            if i == 0 && steps[0].kind == ViewKind::Start && resumed(&screen.history_lines()) {
                steps[0].kind = ViewKind::Recap;
            }
            Some(screen.transcript())
        } else {
            None
        };
        let start = transcript
            .as_ref()
            .map_or(end, |t| next_start(&seen, t, end));
        if let Some(p) = pending.take() {
            // Cut at the echo, the view's lines the next step rewrote that show what it sent
            // are its typing, not this view's drawing.
            let typed = steps
                .get(p.index + 1)
                .filter(|_| trim)
                .map(|n| n.said.clone().unwrap_or_else(|| n.name.clone()));
            let part = p.part(start, typed.as_deref());
            let erased = Erased::since(&judged, p.erased_from);
            let view = View {
                step: &steps[p.index],
                line: recording
                    .events
                    .get(steps[p.index].event)
                    .map_or(1, |t| t.line),
                before: &befores[p.index],
                previous: p.index.checked_sub(1).map(|x| &befores[x]),
            };
            judged.push(view.judge(&part, bases[p.index].as_deref(), &erased, said));
        }
        let Some(transcript) = transcript else { break };
        let erased_from = match seen_rows.get(start) {
            Some(&row) if start < end => row,
            _ => usize::MAX,
        };
        end = transcript.lines.len();
        seen_rows = transcript.lines.iter().map(|l| l.row).collect();
        seen = transcript.lines.iter().map(|l| l.text.clone()).collect();
        pending = Some(Pending {
            index: i,
            transcript,
            start,
            erased_from,
        });
    }
    judged
}

impl Pending {
    /// Its lines from its first: those from `next_start` on that the next step rewrote to show
    /// `typed` (what it sent) left out.
    fn part(&self, next_start: usize, typed: Option<&str>) -> Transcript {
        Transcript {
            lines: self.transcript.lines[self.start..]
                .iter()
                .enumerate()
                .filter(|(k, l)| {
                    let text = l.text.trim();
                    let rewritten = self.start + k >= next_start;
                    !(rewritten && !text.is_empty() && typed.is_some_and(|t| t.contains(text)))
                })
                .map(|(_, l)| l.clone())
                .collect(),
        }
    }
}

/// A resize while the client was busy (a row was made after it, before the next line was sent:
/// a drag while a reply streams) belongs to the view it came in: such steps are dropped.
fn drop_busy_resizes(steps: &mut Vec<Step>, stamps: &[Stamp], offset: f64) {
    let sent_after = |i: usize| {
        steps[i + 1..]
            .iter()
            .find(|s| !s.resize)
            .map_or(f64::INFINITY, |s| offset + s.sent)
    };
    let busy: Vec<bool> = (0..steps.len())
        .map(|i| {
            let (from, to) = (offset + steps[i].sent - CLOCK_SLACK, sent_after(i));
            steps[i].resize
                && stamps
                    .iter()
                    .any(|s| s.timestamp >= from && s.timestamp < to)
        })
        .collect();
    let mut busy = busy.into_iter();
    steps.retain(|_| !busy.next().unwrap_or(false));
}

/// A view of a recording, ready to judge.
struct View<'a> {
    step: &'a Step,
    line: usize,
    /// The database when its step was sent.
    before: &'a Before,
    /// The database when the step before it was sent.
    previous: Option<&'a Before>,
}

impl View<'_> {
    /// Judges the view's lines `part` against `basis` (the database when the view ended; `None`
    /// when no session held a message), drawn over the lines `erased`.
    fn judge(
        &self,
        part: &Transcript,
        basis: Option<&Basis>,
        erased: &Erased,
        said: Option<&Said>,
    ) -> Judged {
        let (kind, name) = (self.step.kind, self.step.name.clone());
        let Some(basis) = basis else {
            return unjudged(kind, name, self.line);
        };
        let expected = &basis.expected;
        let mut rules = Rules::new(kind, expected, self.before, erased);
        // A line typed while a reply streams (`/queue`, `/steer`): the rest of that reply may
        // be drawn in this view, once, as well as in the one where it began.
        if let Some(previous) = self.previous.filter(|_| mid_turn(self.step)) {
            for (m, message) in expected.messages.iter().enumerate() {
                if self.before.holds(message) && !previous.holds(message) {
                    if let Some(slot) = rules.allowed.as_mut().and_then(|a| a.get_mut(m)) {
                        *slot = (*slot).max(1);
                    }
                    if !rules.optional.contains(&m) {
                        rules.optional.push(m);
                    }
                }
            }
        }
        judge_by((kind, name, self.line), part, basis, &rules, said)
    }
}

/// Whether the raw history `lines` hold the classic CLI's resume notice (0.19's English one or
/// 0.22's untranslated i18n key).
fn resumed(lines: &[String]) -> bool {
    lines.iter().any(|l| {
        l.starts_with("↻ Resumed session ") || l.starts_with("cli.resume.resumed_session ")
    })
}

#[cfg(test)]
mod tests;
