//! Stage `display`: the harness's own, independent definition of what a correct client shows.
//!
//! Input: rows from [`crate::store`]. Output: [`Expected`] — the logical messages in display order,
//! each with every stored row that is a copy of it, plus the internal texts (summaries, handoff
//! markers) that must NOT be shown. This is the display contract of `DESIGN.md`; it is not a copy of
//! the client's code. Each rule is documented where it is applied, with the case that motivates it.
//!
//! OWNER: helper "model" — contract below is fixed; implementation pending.

use crate::store::{Store, StoreError};

/// A message role as displayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// What the user typed.
    User,
    /// A model reply.
    Assistant,
    /// Tool output.
    Tool,
    /// Anything else stored (`system`, notices).
    Other,
}

/// A reference to one stored row.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RowRef {
    /// `messages.id`.
    pub id: i64,
    /// `messages.session_id`.
    pub session_id: String,
    /// `messages.message_uid` (None on legacy databases).
    pub message_uid: Option<String>,
}

/// One logical message: what the user must see exactly once.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LogicalMessage {
    /// Displayed role.
    pub role: Role,
    /// The text a correct display shows (for a carrier: the carried reply, not the summary).
    pub text: String,
    /// Every stored row that is a copy of this message, ordered by id (first = the original).
    pub rows: Vec<RowRef>,
    /// The row a correct display renders (live copy first, then the newest).
    pub shown: i64,
}

/// Text that is internal to the client (summaries, handoff markers) and must not be shown.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct InternalText {
    /// The rows holding it.
    pub rows: Vec<RowRef>,
    /// The internal text itself.
    pub text: String,
}

/// Which display surface is checked: what kinds of rows it shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Surface {
    /// Whether tool results and tool-only assistant rows are shown (the classic CLI's resume recap
    /// hides them; the markdown export shows them).
    pub tool_output: bool,
}

/// What a correct client displays for one session.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Expected {
    /// The session displayed.
    pub session_id: String,
    /// Its lineage, root first (the displayed session last).
    pub lineage: Vec<String>,
    /// Number of stored rows considered (every state, whole lineage).
    pub stored_rows: usize,
    /// Logical messages in display order.
    pub messages: Vec<LogicalMessage>,
    /// Internal texts that must not be shown.
    pub internal: Vec<InternalText>,
}

/// Projects the display of `session_id` (with its lineage) for `surface`.
pub fn expected(store: &Store, session_id: &str, surface: Surface) -> Result<Expected, StoreError> {
    let _ = (store, session_id, surface);
    unimplemented!("model helper")
}
