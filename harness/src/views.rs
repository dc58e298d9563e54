//! A live screen judged as a sequence of views.
//!
//! Stage `views`: a live screen judged as a sequence of views, so a finding means the client did
//! something wrong.
//!
//! A terminal keeps what was printed. Judging the whole screen since launch against one
//! projection of `state.db` holds everything the client legitimately drew earlier against a
//! database that has since changed: a `/history` listing the user asked for, an exchange still in
//! the scrollback after `/retry` or `/undo`, a turn the user rolled back. So the classic CLI's
//! screen is cut into *views* at the steps the harness drives — each `launch`, `say`, `command`,
//! `/resume` and `resize` starts one, which ends where the next starts — and each view is judged
//! once, when its step is done, against what that step should draw:
//!
//! | view | the step | what it must draw | what it may draw besides |
//! |---|---|---|---|
//! | [`ViewKind::Recap`] | a launch with `--resume`/`-c`, `/resume ID` | the display contract's projection of the session now open, under the recap's display settings | nothing |
//! | [`ViewKind::Exchange`] | `say`, `/retry`, `/steer`, `/queue`, a resize | the messages the step added to `state.db`, each once | nothing: an earlier message drawn again (a reprint over a streamed reply, a resize reprinting the conversation) counts |
//! | [`ViewKind::Command`] | any other command (`/history`, `/undo`, `/branch`, `/compress`, `/redraw`, …) | nothing | each message once (a listing), and once each message it took back (the composer after `/undo`) |
//! | [`ViewKind::Start`] | a launch without `--resume`/`-c` | nothing | nothing |
//!
//! A message the step *added* is one the database did not hold when the step began: its first
//! row was written during the step, and none of its rows carries the `message_uid` of a row
//! written before (a compaction's carried copy, a carrier or a pruned stub is the message it
//! copies, not a new one) — [`Before`]. A command's output is never required to draw anything:
//! what a command writes (a compaction's copies, a branch's copies, a notice) is not new
//! conversation, and a database without uids cannot tell its copies from new rows.
//!
//! Within a view every rule of the oracle holds (internal text, taken-back messages, order,
//! data duplicates); across views, a view counts only what it must not draw. What lies above a
//! view's start is frozen: it was judged with its own view and is never judged again — a later
//! check of the same client process reports that view's findings again as *carried*, naming the
//! step that drew them. Where the client rewrote lines an earlier view drew (a clear and repaint:
//! the Ctrl-C repaint, a redraw; or the terminal re-wrapped its history on a resize), the next
//! view starts at the first changed line, and may draw what the rewritten lines drew as often
//! as they drew it ([`Erased`]): what the client erased is not judged again, and what it draws
//! beyond that is.
//!
//! A check's numbers are the sums over the views of the client process on screen
//! ([`combine`]). The Ink TUI repaints its whole frame: each check judges the frame whole,
//! against what the step that drew it should leave there ([`tui`]). Screens that are not a
//! growing history are judged whole, as one recap view: an exported file (a JSONL export by its
//! own contract: the session's live rows as stored), and a `repro` of a resume (one step: the
//! recap). A saved recording (`check --cast`) is cut into views from what it shows of its
//! steps, each judged against the database as it was then ([`recorded`]).

use std::collections::{HashMap, HashSet};

use crate::display::{Expected, LogicalMessage};
use crate::oracle::{Check, Drawn, Findings, Said};
use crate::store::{Store, StoreError};
use crate::terminal::Transcript;
use crate::verdict::{Basis, Rules};

/// What a view is expected to draw (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ViewKind {
    /// A launch without `--resume`/`-c`: the banner, no message.
    Start,
    /// A resume recap: the projection of the session now open.
    Recap,
    /// A live exchange or a resize: the messages the step added, each once; nothing earlier.
    Exchange,
    /// A command's output: nothing required; each message, and each message the command took
    /// back, at most once.
    Command,
}

impl ViewKind {
    /// The kind's name, as `--json` writes it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            ViewKind::Start => "start",
            ViewKind::Recap => "recap",
            ViewKind::Exchange => "exchange",
            ViewKind::Command => "command",
        }
    }

    /// The view a launch with `args` starts: a recap when it resumes a session.
    pub(crate) fn of_launch(args: &[String]) -> ViewKind {
        let resumes = args
            .iter()
            .any(|a| matches!(a.as_str(), "--resume" | "-r" | "-c" | "--continue"));
        if resumes {
            ViewKind::Recap
        } else {
            ViewKind::Start
        }
    }

    /// The view a slash command typed at the idle prompt starts.
    pub(crate) fn of_command(command: &str) -> ViewKind {
        let name = command.split_whitespace().next().unwrap_or("");
        match name {
            "/resume" => ViewKind::Recap,
            "/retry" | "/steer" | "/queue" => ViewKind::Exchange,
            _ => ViewKind::Command,
        }
    }
}

/// What `state.db` held when a view started: what the view's step added or took back is what
/// the database holds beyond it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Before {
    /// The largest message id then (rows with larger ids were written during the view).
    pub(crate) max_row_id: i64,
    /// Every `message_uid` stored then: a row written later with one of them is a copy of a
    /// message already there (a compaction's carried tail, a carrier, a pruned stub), not a new
    /// message, though its original may no longer be a display candidate.
    pub(crate) uids: HashSet<String>,
    /// The rows of the messages taken back by then.
    pub(crate) taken_back_rows: HashSet<i64>,
}

impl Before {
    /// What `store` holds now, and what `basis` (its projection, when a session holds messages)
    /// shows taken back.
    pub(crate) fn read(store: &Store, basis: Option<&Basis>) -> Result<Before, StoreError> {
        Ok(Before {
            max_row_id: store.max_message_id()?,
            uids: store.message_uids()?,
            taken_back_rows: basis
                .into_iter()
                .flat_map(|b| &b.expected.taken_back)
                .flat_map(|t| t.rows.iter().map(|r| r.id))
                .collect(),
        })
    }

    /// Whether `message` was in the database before: its first row was, or one of its rows
    /// carries the `message_uid` of a row that was. A message without uids (a 0.19 database,
    /// whose display model joins rows by their text and place, rule 6) was there when the row it
    /// shows was: a question asked again after `/undo` is joined with the one taken back, and is
    /// new.
    fn holds(&self, message: &LogicalMessage) -> bool {
        if message.rows.iter().all(|r| r.message_uid.is_none()) {
            return message.shown <= self.max_row_id;
        }
        message
            .rows
            .first()
            .is_some_and(|r| r.id <= self.max_row_id)
            || message.rows.iter().any(|r| {
                r.message_uid
                    .as_ref()
                    .is_some_and(|u| self.uids.contains(u))
            })
    }
}

/// What the client erased and drew anew since the last view: the earlier views' renderings in
/// the lines it rewrote (a clear and repaint — Ctrl-C, a redraw — or a terminal re-wrapping
/// its history on a resize). The view that draws over them may draw the same once more. Also
/// every internal text the earlier views drew: it is counted once, where it was first drawn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Erased {
    /// Renderings of each message drawn there: its rows, its `message_uid`s, how often.
    messages: Vec<(Vec<i64>, Vec<String>, usize)>,
    /// The internal texts drawn there, or anywhere above.
    internal: HashSet<String>,
    /// Rows of the taken-back messages drawn there.
    taken_back_rows: HashSet<i64>,
}

impl Erased {
    /// What `views` drew from history row `from` on, and the internal texts they drew anywhere:
    /// an internal text already on the screen is counted where it was first drawn (one client
    /// act, counted once), not again where a later view redraws it.
    pub(crate) fn since(views: &[Judged], from: usize) -> Erased {
        let mut out = Erased::default();
        for v in views {
            for d in &v.check.drawn {
                if let Some(text) = d.internal.and_then(|x| v.internal_texts.get(x)) {
                    out.internal.insert(text.clone());
                }
            }
            for d in v.check.drawn.iter().filter(|d| d.rows.1 >= from) {
                if let Some((rows, uids)) = d.message.and_then(|m| v.messages.get(m)) {
                    match out.messages.iter_mut().find(|(r, _, _)| r == rows) {
                        Some(entry) => entry.2 += 1,
                        None => out.messages.push((rows.clone(), uids.clone(), 1)),
                    }
                }
                if let Some(rows) = d.taken_back.and_then(|x| v.taken_back_rows.get(x)) {
                    out.taken_back_rows.extend(rows);
                }
            }
        }
        out
    }

    /// How often `message` was drawn in the erased lines (as the same rows or the same uid).
    fn renderings(&self, message: &LogicalMessage) -> usize {
        self.messages
            .iter()
            .filter(|(rows, uids, _)| {
                message.rows.iter().any(|r| {
                    rows.contains(&r.id) || r.message_uid.as_ref().is_some_and(|u| uids.contains(u))
                })
            })
            .map(|e| e.2)
            .max()
            .unwrap_or(0)
    }
}

impl Rules {
    /// The rules of a view of `kind` whose step ended with the database projected as
    /// `expected`, having started at `before`, drawn over the lines `erased`.
    pub(crate) fn new(
        kind: ViewKind,
        expected: &Expected,
        before: &Before,
        erased: &Erased,
    ) -> Rules {
        let messages = &expected.messages;
        let added = |m: usize| !before.holds(&messages[m]);
        let again = |m: usize| erased.renderings(&messages[m]);
        let all = 0..messages.len();
        let redrawn = |text: &str| erased.internal.contains(text);
        let internal_redrawn = (0..expected.internal.len())
            .filter(|&x| redrawn(&expected.internal[x].text))
            .collect();
        let newly_taken_back = |x: usize| {
            let rows = &expected.taken_back[x].rows;
            rows.iter().any(|r| !before.taken_back_rows.contains(&r.id))
                || rows.iter().any(|r| erased.taken_back_rows.contains(&r.id))
        };
        match kind {
            ViewKind::Recap => Rules {
                recap: true,
                ..Rules::default()
            },
            ViewKind::Start => Rules {
                allowed: Some(all.map(again).collect()),
                internal_redrawn,
                ..Rules::default()
            },
            ViewKind::Exchange => Rules {
                allowed: Some(
                    all.clone()
                        .map(|m| usize::from(added(m)) + again(m))
                        .collect(),
                ),
                optional: all.filter(|&m| !added(m)).collect(),
                internal_redrawn,
                ..Rules::default()
            },
            ViewKind::Command => Rules {
                allowed: Some(all.clone().map(|m| 1 + again(m)).collect()),
                optional: all.collect(),
                taken_back_here: (0..expected.taken_back.len())
                    .filter(|&x| newly_taken_back(x))
                    .collect(),
                internal_redrawn,
                ..Rules::default()
            },
        }
    }
}

/// One view, judged.
#[derive(Debug, Clone)]
pub struct Judged {
    /// Its kind.
    pub(crate) kind: ViewKind,
    /// The step that drew it, as a report names it (`say "What did…"`, `/history`).
    pub(crate) step: String,
    /// The step's line in the scenario file.
    pub(crate) line: usize,
    /// The history rows it spans (first, last; inclusive); `None` when it drew nothing.
    pub(crate) rows: Option<(usize, usize)>,
    /// The oracle's check of the view.
    pub(crate) check: Check,
    /// Rows and `message_uid`s of each logical message of the view's expectation (to carry its
    /// renderings over to a later expectation).
    messages: Vec<(Vec<i64>, Vec<String>)>,
    /// The view's internal texts.
    internal_texts: Vec<String>,
    /// Rows of each of the view's taken-back messages.
    taken_back_rows: Vec<Vec<i64>>,
}

/// A view's part in a check, as reports show it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ViewSummary {
    /// The view's kind.
    pub kind: ViewKind,
    /// The step that drew it.
    pub step: String,
    /// The step's line in the scenario file.
    pub line: usize,
    /// History rows (first, last; inclusive), when it drew anything (`--json`: `{"first",
    /// "last"}` or `null`, as every history range).
    #[serde(serialize_with = "optional_range")]
    pub rows: Option<(usize, usize)>,
    /// Its findings.
    pub findings: Findings,
    /// Its one-sentence verdict.
    pub verdict: String,
    /// True when an earlier check of the same client process already reported it.
    pub carried: bool,
}

/// Serialises an optional history range as the oracle's ranges are, or `null`.
fn optional_range<S: serde::Serializer>(
    range: &Option<(usize, usize)>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match range {
        Some(r) => crate::oracle::history_range(r, s),
        None => s.serialize_none(),
    }
}

/// The name a report gives a `say` of `text`: its first six words (`say "What did a …"`).
pub(crate) fn say_name(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    let cut = if words.len() > 6 { " …" } else { "" };
    format!("say \"{}{cut}\"", words[..words.len().min(6)].join(" "))
}

/// The lines of `transcript` from `start` on (a view's part of the screen).
pub(crate) fn slice(transcript: &Transcript, start: usize) -> Transcript {
    Transcript {
        lines: transcript
            .lines
            .get(start..)
            .map(<[_]>::to_vec)
            .unwrap_or_default(),
    }
}

/// Where the next view starts: `end` (where the last one ended), or the first line of
/// `transcript` that differs from `seen` (what the views before read) when the client rewrote
/// a line above.
pub(crate) fn next_start(seen: &[String], transcript: &Transcript, end: usize) -> usize {
    let same = seen
        .iter()
        .zip(&transcript.lines)
        .take_while(|(a, b)| **a == b.text)
        .count();
    end.min(same)
}

/// Judges the view `transcript` (its part of the screen) drawn by a step of `kind`, against
/// `basis` (the database when the step was done), having started at `before`, drawn over the
/// lines `erased`.
pub(crate) fn judge(
    view: (ViewKind, String, usize),
    transcript: &Transcript,
    basis: &Basis,
    (before, erased): (&Before, &Erased),
    said: Option<&Said>,
) -> Judged {
    let rules = Rules::new(view.0, &basis.expected, before, erased);
    judge_by(view, transcript, basis, &rules, said)
}

/// Judges the view `transcript` drawn by a step of `kind` against `basis` under `rules`.
fn judge_by(
    (kind, step, line): (ViewKind, String, usize),
    transcript: &Transcript,
    basis: &Basis,
    rules: &Rules,
    said: Option<&Said>,
) -> Judged {
    let check = basis.check_view(&step, transcript, said, rules);
    let rows = transcript
        .lines
        .first()
        .zip(transcript.lines.last())
        .map(|(a, b)| (a.row, b.row));
    let e = &basis.expected;
    Judged {
        kind,
        step,
        line,
        rows,
        check,
        messages: e
            .messages
            .iter()
            .map(|m| {
                let ids = m.rows.iter().map(|r| r.id).collect();
                let uids = m
                    .rows
                    .iter()
                    .filter_map(|r| r.message_uid.clone())
                    .collect();
                (ids, uids)
            })
            .collect(),
        internal_texts: e.internal.iter().map(|x| x.text.clone()).collect(),
        taken_back_rows: e
            .taken_back
            .iter()
            .map(|t| t.rows.iter().map(|r| r.id).collect())
            .collect(),
    }
}

/// A view with nothing to judge against (no session holds messages yet): no findings.
pub(crate) fn unjudged(kind: ViewKind, step: String, line: usize) -> Judged {
    Judged {
        kind,
        check: Check::empty(&step),
        step,
        line,
        rows: None,
        messages: Vec::new(),
        internal_texts: Vec::new(),
        taken_back_rows: Vec::new(),
    }
}

/// The check `at` of a screen made of `views` (in screen order; `reported` of them were
/// reported by an earlier check), on the expectation `now` (the database at the check): the
/// findings summed, every repeat, missing and taken-back message of every view in order, and the
/// renderings carried over to `now`'s messages (for reports), with each view's summary.
pub(crate) fn combine(
    at: &str,
    views: &[Judged],
    reported: usize,
    now: &Basis,
) -> (Check, Vec<ViewSummary>) {
    let mut check = Check::empty(at);
    check.data_problems = now.data_problems().to_vec();
    let by_row: HashMap<i64, usize> = now
        .expected
        .messages
        .iter()
        .enumerate()
        .flat_map(|(m, msg)| msg.rows.iter().map(move |r| (r.id, m)))
        .collect();
    let internal_of = |text: &str| now.expected.internal.iter().position(|x| x.text == text);
    check.internal_words = vec![0; now.expected.internal.len()];
    let mut summaries = Vec::new();
    for (i, v) in views.iter().enumerate() {
        let c = &v.check;
        let f = &mut check.findings;
        f.add(&c.findings);
        check.repeats.extend(c.repeats.iter().cloned());
        check.altered_code.extend(c.altered_code.iter().cloned());
        check.missing.extend(c.missing.iter().cloned());
        check.taken_back.extend(c.taken_back.iter().cloned());
        let to_now = |m: usize| {
            let (rows, _) = v.messages.get(m)?;
            rows.iter().find_map(|id| by_row.get(id)).copied()
        };
        check.drawn.extend(c.drawn.iter().filter_map(|d| {
            if d.taken_back.is_some() {
                return None; // reports mark taken-back messages from `taken_back`
            }
            let message = match d.message {
                Some(m) => Some(to_now(m)?),
                None => None,
            };
            let internal = match d.internal {
                Some(x) => Some(internal_of(v.internal_texts.get(x)?)?),
                None => None,
            };
            Some(Drawn {
                message,
                internal,
                ..d.clone()
            })
        }));
        check
            .out_of_order_messages
            .extend(c.out_of_order_messages.iter().filter_map(|&m| to_now(m)));
        for (x, &words) in c.internal_words.iter().enumerate() {
            let now_x = v.internal_texts.get(x).and_then(|t| internal_of(t));
            if let Some(slot) = now_x.and_then(|n| check.internal_words.get_mut(n)) {
                *slot += words;
            }
        }
        summaries.push(ViewSummary {
            kind: v.kind,
            step: v.step.clone(),
            line: v.line,
            rows: v.rows,
            findings: c.findings,
            verdict: crate::oracle::verdict_sentence(c),
            carried: i < reported,
        });
    }
    (check, summaries)
}

pub mod recorded;
#[cfg(test)]
mod tests;
pub(crate) mod tui;
