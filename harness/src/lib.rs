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
//! - [`client`]: provisions the real client (a pinned venv in a cache directory) and writes its config.
//! - [`provider`]: an OpenAI-compatible fake model on 127.0.0.1, the ground truth of what was said.
//! - [`driver`]: the real client in a real PTY (`expectrl`), every byte to the screen and an asciicast.
//! - [`screen`]: `vt100` emulation keeping the whole rendered history, chrome stripped, as a [`screen::Transcript`].
//! - [`store`]: read-only access to `state.db` (0.19 and 0.22 schemas), sessions, lineage and rows.
//! - [`display`]: the harness's own definition of a correct display, as [`display::Expected`].
//! - [`history`]: generated compaction histories in the real schemas (a test double of the client's
//!   writes, for property tests, the differential test and benchmarks).
//! - [`html`]: a browsable report (`--report DIR`): each check's screen with repeats highlighted
//!   and linked to their stored rows, the recordings and the provider log.
//! - [`inspect`]: what a `state.db` holds and what a correct display of it is (no client).
//! - [`integrity`]: data problems the database alone shows (a reply stored before its question,
//!   an utterance stored twice, a parent cycle or missing parent, ids against timestamps), by row.
//! - [`oracle`]: pure comparison of a transcript against the expectation, producing findings.
//! - [`words`]: the word segmentation the oracle counts with (UAX-29, case-folded, CJK one each).
//! - [`reference`](mod@reference): the client's own display read (`get_resume_conversations`) through one
//!   long-lived worker, and its comparison with [`display`] (the differential test).
//! - [`report`]: human text and JSON verdicts.
//! - [`runner`]: executes a scenario end to end and produces its verdict.
//! - [`settings`]: the client's `display.resume_*` settings (from a `config.yaml`) and the classic
//!   CLI's resume recap under them: which messages it shows, cut how, and what it prints for the rest.

pub mod client;
pub mod display;
pub mod driver;
pub mod history;
pub mod html;
pub mod inspect;
pub mod integrity;
pub mod interrupt;
pub mod oracle;
pub mod provider;
pub mod reference;
pub mod report;
pub mod runner;
pub mod scenario;
pub mod screen;
pub mod settings;
pub mod store;
pub mod triage;
pub mod words;
