//! hermes-e2e: an end-to-end harness and regression oracle for the Hermes Agent terminal client.
//!
//! The pipeline runs in one direction; each stage consumes the previous stage's output type only:
//!
//! ```text
//! scenario.toml ─► runner ─┬─► provider/ (fake model on 127.0.0.1) ─── what was said ──────┐
//!                          └─► driver (real client, real PTY) ─bytes─► terminal/ ─► Transcript
//! state.db ─► store (read-only copy) ─► display (the display contract) ─► Expected          │
//! Transcript + Expected + what was said ─► verdict ─► oracle ─► Check ─► report/ (text, JSON, HTML)
//! client/ : what the real client is — every stage that meets it asks here
//! ```
//!
//! # The contract
//!
//! - Judge a recording: [`Store::open`] a `state.db`, [`Basis::read`] it (which [`Session`], on
//!   which [`display::Surface`]), then [`Basis::check`] each [`Transcript`] (from
//!   [`terminal::cast::replay`] or a [`Screen`]) into a [`Check`] with its [`Findings`]. This is
//!   the one path to a verdict.
//! - Run a scenario: [`Scenario`] (the strict TOML format, [`scenario`]), [`run`] with
//!   [`RunOptions`], and its [`ScenarioResult`] (one [`CheckResult`] per check), printed by
//!   [`report`] (text, JSON, HTML).
//! - The binary's commands, their arguments and exit status: [`cli`].
//!
//! Public modules: [`cli`], [`display`], [`report`], [`runner`], [`scenario`], [`store`],
//! [`terminal`]; the types a [`Check`] and a [`ScenarioResult`] carry are re-exported here. Every
//! other stage is private. `testing` (hidden, feature `test-support`) re-exports by name the
//! internals the crate's own integration tests and benchmarks reach; it is not part of the
//! contract.
//!
//! # Where to find it (one hop)
//!
//! | question | where |
//! |---|---|
//! | how is a verdict made from a transcript and a database? | [`Basis`] (`read`, then `check`; `verdict.rs`) |
//! | what counts as a correct display? (the display contract) | [`display`] (and `docs/display-contract.md`) |
//! | how are repeats counted? | `oracle.rs` (stages in `oracle/`), its sentences in `oracle/wording.rs` |
//! | stale previews, prompt rows, blank runs, questions shown once (row counts) | [`RowCounts`] (`oracle/rows.rs`) |
//! | terminal answers drawn as text, a paste sent as several messages (`stray_text`, `input_split`) | `oracle/input.rs` |
//! | a terminal that answers queries late or never, or sends pastes unbracketed (`[terminal]`) | `terminal::Behaviour` (`terminal/behaviour.rs`) |
//! | what does the real client look like? (UI profile) | `client/profile.rs`: `Ui`, the idle rule `is_idle` |
//! | when is a step done? what the harness waits for, and for how long | `client/profile.rs` (`reply_closed`, `Ui::settle`, `Ui::command_settle`, `ENTER_HOLD`), the wait loop `Driver::wait_done` (`driver.rs`) |
//! | what on screen is client chrome? the recap panel? | `client/chrome.rs`, `client/recap.rs` |
//! | what does the client write into `state.db`? | `client/stored.rs` (row markers, schemas), read by [`store`] |
//! | how is the client installed and configured? | `client.rs` (`resolve`, `base_config`) |
//! | the asciicast format (write and replay) | [`terminal::cast`] |
//! | the terminal emulator, the escape scanner | [`terminal::Screen`], `terminal::scan` |
//! | a terminal that reflows on resize; which one a check reads | [`terminal::ReflowScreen`], [`terminal::Terminal`] |
//! | the fake model (HTTP, OpenAI wire format, script, faults) | `provider/` |
//! | which session did the client open? is a session listing whole? (rules 12, 13) | `oracle/opened.rs`; the runner's `judge_opened` and `Format::Listing` (`runner/steps.rs`) |
//! | killing the client mid-turn (`kill`), its orphans | `Driver::kill_tree` (`driver.rs`), `Run::killed` (`runner/steps.rs`) |
//! | what each scenario step does | [`runner`] (`runner/steps.rs`; the client session protocol in `runner/session.rs`; acting while a reply streams in `runner/streaming.rs`; the `export` step in `runner/export.rs`; scenarios on several threads in `runner/jobs.rs`) |
//! | `repro`, `record` | [`runner::repro`](fn@runner::repro), `runner::record` |
//! | the commands of the binary: arguments, output, exit status | [`cli`] (one `cli/<command>_command.rs` each) |
//! | the oracle on a saved recording and a `state.db` (`check`'s judging) | `recording.rs` (and `recording/belonging.rs`) |
//! | first bad client version, the smallest database that still misrenders, failure signatures | `triage/` (`bisect`, `minimize`, `signature`) |
//! | text, JSON and HTML reports | [`report`], [`report::html`] |
//!
//! # Modules
//!
//! Public:
//!
//! - [`scenario`]: strict TOML scenario files.
//! - [`terminal`]: `vt100` emulation keeping the whole rendered history, chrome stripped, as a
//!   [`terminal::Transcript`], and the same on `alacritty_terminal`, which re-wraps rows on a
//!   width change ([`terminal::ReflowScreen`]; a scenario's `terminal` key chooses); the one escape scanner; asciicast write and replay; `COLSxROWS`.
//! - [`store`]: read-only access to `state.db` (0.19 and 0.22 schemas), sessions, lineage and rows.
//! - [`display`]: the harness's own definition of a correct display, as [`display::Expected`].
//! - [`runner`]: executes a scenario end to end and produces its verdict (steps, client session
//!   protocol, `repro`, `record`, result types, errors: one file each).
//! - [`report`]: human text and JSON verdicts, and [`report::html`], a browsable report
//!   (`--report DIR`): each check's screen with repeats highlighted and linked to their stored rows,
//!   the recordings and the provider log.
//! - [`cli`]: the commands of the binary.
//!
//! Private (file names):
//!
//! - `client/`: the real client — provisioning (a pinned venv in a cache directory) and config, and
//!   what it looks like and does: UI profiles and the idle rule, chrome, the recap panel, the
//!   stored-row markers and schemas. The one place a new client version touches.
//! - `provider/`: an OpenAI-compatible fake model on 127.0.0.1, the ground truth of what was said
//!   (a folder: HTTP, the OpenAI wire format, script matching, faults).
//! - `driver.rs`: the real client in a real PTY (`expectrl`), every byte to the screen and an asciicast.
//! - `settings.rs`: the client's `display.resume_*` settings (from a `config.yaml`) and the classic
//!   CLI's resume recap under them: which messages it shows, cut how, and what it prints for the rest.
//! - `integrity.rs`: data problems the database alone shows (a reply stored before its question,
//!   an utterance stored twice, a parent cycle or missing parent, ids against timestamps), by row.
//! - `inspect.rs`: what a `state.db` holds and what a correct display of it is (no client).
//! - `words.rs`: the word segmentation the oracle counts with (UAX-29, case-folded, CJK one each).
//! - `oracle.rs`: pure comparison of a transcript against the expectation, producing findings; its
//!   `oracle/wording.rs` is the one wording of verdicts and causes every report uses.
//! - `verdict.rs`: where a verdict is made from a transcript and a database — one reading of the
//!   database ([`Basis::read`]), then the oracle on each transcript ([`Basis::check`]).
//! - `views.rs`: the views of a live screen a check's numbers add up from.
//! - `recording.rs`: a saved recording and a `state.db` judged without a client (`check`).
//! - `triage/`: `bisect` over published client versions, `minimize`, and the signature of
//!   a verdict.
//! - `interrupt.rs`: SIGINT/SIGTERM end the clients' process groups before the harness exits.
//! - `chain.rs`: an error and its causes, rendered once at the edge (the binary's `error:` and
//!   `caused by:` lines, a verdict's `error` field on one line).
//! - `history.rs` (feature `test-support`): generated compaction histories in the real schemas (a
//!   test double of the client's writes, for property tests, the differential test and
//!   benchmarks), in reused in-memory databases read by [`Store`] without a file or a copy.
//! - `reference.rs`: the client's own display read (`get_resume_conversations`) through one
//!   long-lived worker and one long-lived `SessionDB`, and its comparison with [`display`] (the
//!   differential test); also the fast offline tier of `minimize`.

#![warn(missing_docs)]
// What is `pub` is reachable from outside: the contract, or `testing` (feature `test-support`,
// which the crate's own tests and benches enable). `cargo fix` applies it (docs/architecture.md,
// "The public surface").
#![cfg_attr(feature = "test-support", warn(unreachable_pub))]

// The contract: what the binary, a scenario author and a library user reach.
pub mod cli;
pub mod display;
pub mod report;
pub mod runner;
pub mod scenario;
pub mod store;
pub mod terminal;
#[cfg(feature = "test-support")]
#[doc(hidden)]
pub mod testing;

// The stages behind it, reached through the re-exports below.
mod chain;
mod client;
mod driver;
#[cfg(any(test, feature = "test-support"))]
mod history;
mod inspect;
mod integrity;
mod interrupt;
mod oracle;
mod provider;
mod recording;
mod reference;
mod settings;
mod triage;
mod verdict;
mod views;
mod words;

pub use integrity::{DataProblem, DataProblemKind};
pub use oracle::{Cause, Check, Drawn, Findings, Missing, Repeat, RowCounts, Said};
pub use runner::{run, CheckResult, RunOptions, ScenarioResult};
pub use scenario::Scenario;
pub use store::Store;
pub use terminal::{Screen, Transcript};
pub use verdict::{Basis, Error as VerdictError, Rules, Session};
pub use views::{ViewKind, ViewSummary};
