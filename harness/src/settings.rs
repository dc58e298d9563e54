//! The client's display settings, and what the classic CLI's resume recap shows under them.
//!
//! Input: the `display:` section of the Hermes `config.yaml` the client ran with (or the user's own,
//! `--config USER_CONFIG.yaml`), and the logical messages of an [`Expected`](crate::display::Expected).
//! Output: [`DisplaySettings`] and, from [`recap`], a [`Recap`]: for every message whether the
//! recap panel ("Previous Conversation") shows it, and the exact text it shows, truncated as the
//! client truncates, plus the line the client prints for the entries it left out.
//!
//! Every rule here is the client's, read from its source; `docs/client-display-settings.md` quotes
//! the source lines (file:line) per version, and each unit test (`settings/tests.rs`) cites the
//! line it pins. In short (both 0.19.0 and iot 0.22.2.post1):
//!
//! - `display.resume_display`: only the exact string `"minimal"` hides the recap panel (the
//!   "↻ Resumed session …" status line is still printed); every other value, `"off"` included,
//!   shows it in full.
//! - The recap is built from *entries*: one per user message, one per assistant message with
//!   visible text (or with tool calls when `resume_skip_tool_only` is false), and on iot one per
//!   event row (`display_kind` such as `model_switch`). Tool results, `system` rows and assistant
//!   rows with nothing visible are not entries.
//! - `display.resume_exchanges` (N): the last `2·N` *entries* are kept, whatever their roles (an
//!   "exchange" is not a user/assistant pair: entries are counted, not pairs). The number of entries
//!   dropped is printed first: `  ... K earlier messages ...` on 0.19; on iot the untranslated key
//!   `  cli.resume.earlier_messages` (the iot wheel ships no `locales/`, so `t()` returns the bare
//!   key and the count is lost).
//! - `display.resume_max_user_chars` (U): a user text longer than U code points (after escape
//!   sanitising, not stripped, newlines included) is cut to its first U code points + `...`.
//! - `display.resume_max_assistant_lines` (L) then `display.resume_max_assistant_chars` (C): the
//!   assistant text (reasoning tags and leaked tool-call XML removed, then stripped, then
//!   sanitised) is first cut to its first L lines (Python `str.splitlines`, before any wrapping),
//!   joined with `\n`, + ` ...`; the result, if longer than C code points, is cut to C + `...`.
//! - The *last* assistant entry, when it is inside the window, is shown in full (untruncated,
//!   not dimmed), with its tool-call summary.
//! - `display.resume_skip_tool_only` (true): an assistant row with tool calls and no visible text
//!   is not an entry. When false it is an entry showing only the summary (`[2 tool calls: a, b]`
//!   on 0.19, the bare key `cli.resume.tool_calls_other` on iot). An assistant row with text *and*
//!   tool calls always shows the summary after its (truncated) text.
//! - Negative and zero limits follow Python slicing (`text[:-2]` drops the last two code points);
//!   they are modelled, not rejected.
//!
//! # How the oracle should use it
//!
//! 1. Settings: [`DisplaySettings::from_config_yaml`] on the `config.yaml` the client ran with
//!    (scenario and `repro`: the file the harness wrote into `HERMES_HOME`), or on the user's
//!    `--config` file (`repro`, `check`). [`DisplaySettings::wide`] is what `client::base_config`
//!    writes today; [`DisplaySettings::stock`] is a user with no `display:` keys.
//! 2. Messages: build the `Expected` with `Surface { tool_output: true }` when
//!    `resume_skip_tool_only` is false (tool-only assistant messages are then entries); with the
//!    stock `true`, `Surface::default()` gives the same recap. Give [`recap`] the tool calls of
//!    the stored rows ([`tool_call_names`] of each, by row id) so the summaries and the tool-only rule are exact.
//! 3. Expectation on the recap panel, per message ([`Recap::items`], same order as the input):
//!    - [`RecapItem::Shown`]: the message must be on the recap exactly once, showing
//!      [`Shown::text`]. Count words on [`Shown::complete`] (the shown part of the message without
//!      the word the cut fell into, which appears only as a fragment); the summary
//!      ([`Shown::tool_summary`]) and the markers (`...`, ` ...`) are client chrome, not message
//!      words.
//!    - [`RecapItem::Dropped`]: left out by the window: *not* on the recap; its absence is not a
//!      "missing message" finding, and [`Recap::omitted_line`] must be on screen instead.
//!    - [`RecapItem::Skipped`] / [`RecapItem::Minimal`]: never on the recap.
//!    - Words of a message that are on the recap beyond what [`Shown`] allows (the part the client
//!      cut off) are a finding: the client showed more than its settings say.
//! 4. [`Recap::lines`] are the panel's body lines as the client appends them, before Rich wraps
//!    them to the panel width (labels and continuation indents included), for excerpts and
//!    snapshot-style comparisons.
//!
//! Limits of the model: the recap applies the client's shaping rules to the harness's logical
//! messages. `LogicalMessage::text` is trimmed, so a stored user text with leading or trailing
//! whitespace counts a few code points fewer here than in the client (pass the raw text through
//! [`RecapSource`] to be exact); iot event rows are not logical messages, so [`recap`] does not
//! count them in the window (use [`recap_sources`] with [`RecapSource::Event`] and
//! [`event_label`] for that); on 0.19 the recap reads only the tip session's active rows, so
//! messages the display model keeps from parent sessions or archived rows are not in the client's
//! window at all (the oracle decides what to make of that; this module counts what it is given).

mod config;
mod panel;
#[cfg(test)]
mod tests;
mod text;
pub(crate) mod yaml;

pub(crate) use config::{ClientVersion, DisplaySettings, ResumeDisplay, SettingsError};
pub(crate) use panel::not_on_recap;
// The rest of the recap model: the steps of "How the oracle should use it" that nothing outside
// this module takes yet (its unit tests do).
#[cfg(test)]
pub(crate) use panel::{
    event_label, recap, recap_sources, tool_call_names, EntryKind, Recap, RecapItem, RecapSource,
    Shown, Skip, ToolCalls,
};
