//! The Ink TUI's screen judged as views (`hermes --tui`, hermes-agent 0.19.0).
//!
//! The TUI repaints its whole frame: what it shows after a step is its transcript as it keeps
//! it in memory, not a history that only grows. So each check judges the frame whole, against
//! what the step that drew it should leave there (docs/views.md, "The Ink TUI"):
//!
//! - after a launch with `--resume`/`-c` or `/resume ID`: the recap, the display contract's
//!   projection of the session now open;
//! - after a live step (a `say`, a command, a resize): the session's messages, each once, with
//!   the exchanges the TUI took back (`/undo`, `/retry`) gone;
//! - after `/compress`: the compacted session's projection — what the TUI means to draw
//!   (`entry.js`: `setHistoryItems([introMsg(r.info), ...toTranscriptMessages(r.messages)])`,
//!   `r.messages` being the compacted history): the session the compaction left, its own rows
//!   without ancestors, and without the rows an in-place compaction archived;
//! - after a launch without a resume flag or `/new`, until a message is sent, a session resumed
//!   or compacted (another command or a resize draws none): nothing.
//!
//! The TUI's `/undo` and `/retry` call `session.undo` in `tui_gateway/server.py`, which pops the
//! last exchange from the backend's in-memory history and never touches `state.db` (read in its
//! code); `/retry` then sends the last question this process sent again (`nothing to retry`
//! when it sent none). So what the TUI took back is known from the steps, not from the
//! database: the last exchange of the session on screen (its last user row on) when the step
//! starts. The frame is judged against the database with those rows rewound
//! ([`Store::edited`]), so a taken-back exchange still drawn is `taken_back_shown`, or — when
//! the exchange was asked again with the same words — the kept exchange drawn twice, a display
//! cause. A resume is judged against the database as it is: there the exchange stored twice is
//! the data the client resumes.
//!
//! A check whose findings are those the previous check of the same client process reported is
//! *carried*: the report names the step that first drew them, as the classic CLI's views do.

use crate::oracle::{verdict_sentence, Check, Findings, Said};
use crate::store::{Store, StoreError};
use crate::terminal::Transcript;
use crate::verdict::{self, Basis};

use super::{Before, Erased, Rules, ViewKind, ViewSummary};
use crate::display::Surface;

/// What the TUI's frame means to show, as the steps so far left it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Anchor {
    /// The newest session with messages and its lineage (a launch, a resume, a live session).
    Lineage,
    /// The session a `/compress` left: its own rows, live ones only.
    Compacted(String),
}

/// A view of the TUI's frame: the step that drew it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Step {
    kind: ViewKind,
    name: String,
    line: usize,
}

/// One client process's TUI frame, as its steps left it (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct TuiFrame {
    anchor: Anchor,
    /// Rows of the exchanges the TUI took back (`/undo`, `/retry`), in the order taken.
    taken_back: Vec<i64>,
    /// Whether this process sent a message (`/retry` needs one).
    sent: bool,
    /// Whether the frame shows no session yet: a launch without a resume flag or `/new`, and no
    /// message sent or session resumed since (a command or a resize draws none).
    fresh: bool,
    /// The step that drew the frame last.
    last: Step,
    /// The rows the step under way takes back, found when it started.
    pending: Vec<i64>,
    /// The findings the last check reported, and the step that first drew them.
    reported: Option<(Findings, Step)>,
}

/// The command's name (`/undo` of `/undo 2`), when `step` is a command.
fn command_name(step: &str) -> Option<&str> {
    step.split_whitespace()
        .next()
        .filter(|w| w.starts_with('/'))
}

impl TuiFrame {
    /// The frame of a client just launched by the step `name` at `line` (a recap when `kind`
    /// says it resumes).
    pub(crate) fn launched(kind: ViewKind, name: String, line: usize) -> TuiFrame {
        TuiFrame {
            anchor: Anchor::Lineage,
            taken_back: Vec::new(),
            sent: false,
            fresh: kind == ViewKind::Start,
            last: Step { kind, name, line },
            pending: Vec::new(),
            reported: None,
        }
    }

    /// Before the step `name` runs: what it will take back, read from `store` (the TUI's
    /// `/undo` always, its `/retry` when this process sent a message).
    pub(crate) fn before(&mut self, name: &str, store: Option<&Store>) -> Result<(), StoreError> {
        self.pending.clear();
        let takes_back = match command_name(name) {
            Some("/undo") => true,
            Some("/retry") => self.sent,
            _ => false,
        };
        if let (true, Some(store)) = (takes_back, store) {
            self.pending = self.last_exchange(store)?;
        }
        Ok(())
    }

    /// The rows of the last exchange of the session on screen not yet taken back: its last live
    /// user row that holds a question (a client notice alone is not one; a notice merged with
    /// the question it came before is, display contract rule 5) and every live row after it.
    fn last_exchange(&self, store: &Store) -> Result<Vec<i64>, StoreError> {
        let session = match &self.anchor {
            Anchor::Compacted(id) => id.clone(),
            Anchor::Lineage => match store.latest_session_with_messages()? {
                Some(s) => s.id,
                None => return Ok(Vec::new()),
            },
        };
        let rows = store.rows(std::slice::from_ref(&session))?;
        let open: Vec<&crate::store::Row> = rows
            .iter()
            .filter(|r| r.active && !self.taken_back.contains(&r.id))
            .collect();
        let question = open.iter().rposition(|r| {
            let content = r.content.as_deref().unwrap_or("");
            r.role == "user"
                && !matches!(crate::display::split_notices(content), Some((_, rest)) if rest.is_empty())
        });
        Ok(question.map_or_else(Vec::new, |q| open[q..].iter().map(|r| r.id).collect()))
    }

    /// After the step (`kind`, `name`, at `line`) is done: what the frame now means to show.
    /// `store` is the database the step left (`None` before the client wrote one).
    pub(crate) fn after(
        &mut self,
        (kind, name, line): (ViewKind, String, usize),
        store: Option<&Store>,
    ) -> Result<(), StoreError> {
        if kind == ViewKind::Recap {
            // A `/resume` in a running TUI: the frame is the resumed session's recap.
            self.anchor = Anchor::Lineage;
            self.taken_back.clear();
            self.fresh = false;
        }
        match command_name(&name) {
            Some("/new") => {
                self.anchor = Anchor::Lineage;
                self.taken_back.clear();
                self.fresh = true;
            }
            Some("/compress") => {
                if let Some(s) = store.map(Store::latest_session_with_messages).transpose()? {
                    self.anchor = s.map_or(Anchor::Lineage, |s| Anchor::Compacted(s.id));
                }
                // The TUI means to draw the compacted history, whatever it showed before.
                self.fresh = false;
            }
            None if name.starts_with("say ") => {
                self.sent = true;
                self.fresh = false;
            }
            _ => {}
        }
        self.taken_back.append(&mut self.pending);
        self.last = Step { kind, name, line };
        Ok(())
    }

    /// The basis the frame is judged against: `store` as the TUI means it ([`Store::edited`]),
    /// on the classic surface (the TUI draws no tool output either). `None` when no session
    /// holds messages.
    pub(crate) fn basis(&self, store: &Store) -> Result<Option<Basis>, StoreError> {
        let surface = Surface::default();
        match &self.anchor {
            Anchor::Compacted(id) => {
                let edited = store.edited(Some(id), &self.taken_back)?;
                Basis::segment(&edited, id, surface).map(Some)
            }
            Anchor::Lineage => {
                let edited = store.edited(None, &self.taken_back)?;
                match Basis::read(&edited, verdict::Session::Latest, surface) {
                    Ok(b) => Ok(Some(b)),
                    Err(verdict::Error::NoSessionWithMessages { .. }) => Ok(None),
                    Err(verdict::Error::Store(e)) => Err(e),
                }
            }
        }
    }

    /// The check `at` of the frame `transcript` against `basis` ([`TuiFrame::basis`]), and the
    /// frame as one view: carried when the last check of this process reported the same
    /// findings, named after the step that first drew them.
    pub(crate) fn judge(
        &mut self,
        at: &str,
        transcript: &Transcript,
        basis: &Basis,
        said: Option<&Said>,
    ) -> (Check, Vec<ViewSummary>) {
        let rules = if self.fresh {
            Rules::new(
                ViewKind::Start,
                &basis.expected,
                &Before::default(),
                &Erased::default(),
            )
        } else {
            Rules {
                recap: true,
                ..Rules::default()
            }
        };
        let check = basis.check_view(at, transcript, said, &rules);
        let found = check.findings != Findings::default();
        let carried = self
            .reported
            .as_ref()
            .filter(|(f, _)| found && *f == check.findings)
            .map(|(_, step)| step.clone());
        let step = carried.clone().unwrap_or_else(|| self.last.clone());
        if carried.is_none() {
            self.reported = found.then(|| (check.findings, step.clone()));
        }
        let rows = transcript
            .lines
            .first()
            .zip(transcript.lines.last())
            .map(|(a, b)| (a.row, b.row));
        let summary = ViewSummary {
            kind: step.kind,
            step: step.name,
            line: step.line,
            rows,
            findings: check.findings,
            verdict: verdict_sentence(&check),
            carried: carried.is_some(),
        };
        (check, vec![summary])
    }
}

#[cfg(test)]
mod tests;
