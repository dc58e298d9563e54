//! hermes-e2e: an end-to-end harness and regression oracle for the Hermes Agent terminal client.
//!
//! The pipeline runs in one direction; each stage consumes the previous stage's output type only:
//!
//! ```text
//! scenario.toml ─► provider (fake model, loopback) ─┐
//!               └► driver (PTY, real client) ──bytes──► screen (vt100: full history) ─► Transcript
//! state.db ─────► store (read-only) ─► display (reference projection) ─► Expected
//! Transcript + Expected + provider log ─► oracle ─► Check ─► report (text / JSON) + insta snapshot
//! ```
//!
//! - [`scenario`]: strict TOML scenario files.
//! - [`client`]: the real client — provisioning (a pinned venv in a cache directory) and config, and what
//!   it looks like and does: UI profiles and the idle rule ([`client::Ui`], [`client::is_idle`]), chrome,
//!   the stored-row markers and schemas ([`client::stored`]).
//! - [`provider`]: an OpenAI-compatible fake model on 127.0.0.1, the ground truth of what was said.
//! - [`driver`]: the real client in a real PTY (`expectrl`), every byte to the screen and an asciicast.
//! - [`terminal`]: `vt100` emulation keeping the whole rendered history, chrome stripped, as a
//!   [`terminal::Transcript`]; the one escape scanner; asciicast write and replay ([`terminal::cast`]).
//! - [`store`]: read-only access to `state.db` (0.19 and 0.22 schemas), sessions, lineage and rows.
//! - [`display`]: the harness's own definition of a correct display, as [`display::Expected`].
//! - `history` (feature `test-support`): generated compaction histories in the real schemas (a test double of the client's
//!   writes, for property tests, the differential test and benchmarks).
//! - [`inspect`]: what a `state.db` holds and what a correct display of it is (no client).
//! - [`integrity`]: data problems the database alone shows (a reply stored before its question,
//!   an utterance stored twice, a parent cycle or missing parent, ids against timestamps), by row.
//! - [`oracle`]: pure comparison of a transcript against the expectation, producing findings; its
//!   [`oracle::wording`] is the one wording of verdicts and causes every report uses.
//! - [`words`]: the word segmentation the oracle counts with (UAX-29, case-folded, CJK one each).
//! - `reference` (feature `test-support`): the client's own display read (`get_resume_conversations`) through one
//!   long-lived worker, and its comparison with [`display`] (the differential test).
//! - [`report`]: human text and JSON verdicts, and [`report::html`], a browsable report
//!   (`--report DIR`): each check's screen with repeats highlighted and linked to their stored rows,
//!   the recordings and the provider log.
//! - [`runner`]: executes a scenario end to end and produces its verdict.
//! - [`report`]: human text and JSON verdicts.
//! - [`runner`]: executes a scenario end to end and produces its verdict (steps, client session
//!   protocol, `repro`, `record`, result types, errors: one module each).
//! - [`settings`]: the client's `display.resume_*` settings (from a `config.yaml`) and the classic
//!   CLI's resume recap under them: which messages it shows, cut how, and what it prints for the rest.
//! - [`verdict`]: where a verdict is made from a transcript and a database — one reading of the
//!   database ([`verdict::Basis::read`]), then the oracle on each transcript ([`verdict::Basis::check`]).

pub mod client;
pub mod display;
pub mod driver;
#[cfg(any(test, feature = "test-support"))]
pub mod history;
pub mod inspect;
pub mod integrity;
pub mod interrupt;
pub mod oracle;
pub mod provider;
#[cfg(any(test, feature = "test-support"))]
pub mod reference;
pub mod report;
pub mod runner;
pub mod scenario;
pub mod settings;
pub mod store;
pub mod terminal;
pub mod verdict;
pub mod words;
