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
//! # Where to find it (one hop)
//!
//! | question | module |
//! |---|---|
//! | how is a verdict made from a transcript and a database? | [`verdict::Basis`] (`read`, then `check`) |
//! | what counts as a correct display? (the display contract) | [`display`] (and `docs/display-contract.md`) |
//! | how are repeats counted? | [`oracle`] (stages in `oracle/`), its sentences in [`oracle::wording`] |
//! | stale previews, prompt rows, blank runs, questions shown once (row counts) | [`oracle::count_rows`] (`oracle/rows.rs`) |
//! | what does the real client look like? (UI profile) | [`client::profile`]: [`client::Ui`], the idle rule [`client::is_idle`] |
//! | when is a step done? what the harness waits for, and for how long | [`client::profile`] ([`client::reply_closed`], [`client::Ui::settle`], [`client::Ui::command_settle`], [`client::profile::ENTER_HOLD`]), the wait loop [`driver::Driver::wait_done`] |
//! | what on screen is client chrome? the recap panel? | [`client::chrome`], [`client::recap`] |
//! | what does the client write into `state.db`? | [`client::stored`] (row markers, schemas), read by [`store`] |
//! | how is the client installed and configured? | [`client`] (`resolve`, `base_config`) |
//! | the asciicast format (write and replay) | [`terminal::cast`] |
//! | the terminal emulator, the escape scanner | [`terminal::Screen`], [`terminal::scan`] |
//! | a terminal that reflows on resize; which one a check reads | [`terminal::ReflowScreen`], [`terminal::Terminal`] |
//! | the fake model (HTTP, OpenAI wire format, script, faults) | [`provider`] |
//! | what each scenario step does | [`runner`] (`runner/steps.rs`; the client session protocol in `runner/session.rs`; acting while a reply streams in `runner/during.rs`) |
//! | `repro`, `record` | [`runner::repro`](fn@runner::repro), [`runner::record`](fn@runner::record) |
//! | the commands of the binary: arguments, output, exit status | [`cli`] |
//! | first bad client version, the smallest database that still misrenders, failure signatures | [`triage`] (`bisect`, `minimize`) |
//! | text, JSON and HTML reports | [`report`], [`report::html`] |
//!
//! # Modules
//!
//! - [`scenario`]: strict TOML scenario files.
//! - [`client`]: the real client — provisioning (a pinned venv in a cache directory) and config, and
//!   what it looks like and does: UI profiles and the idle rule, chrome, the recap panel, the
//!   stored-row markers and schemas. The one place a new client version touches.
//! - [`provider`]: an OpenAI-compatible fake model on 127.0.0.1, the ground truth of what was said
//!   (a folder: HTTP, the OpenAI wire format, script matching, faults).
//! - [`driver`]: the real client in a real PTY (`expectrl`), every byte to the screen and an asciicast.
//! - [`terminal`]: `vt100` emulation keeping the whole rendered history, chrome stripped, as a
//!   [`terminal::Transcript`], and the same on `alacritty_terminal`, which re-wraps rows on a
//!   width change ([`terminal::ReflowScreen`]; a scenario's `terminal` key chooses); the one escape scanner; asciicast write and replay; `COLSxROWS`.
//! - [`store`]: read-only access to `state.db` (0.19 and 0.22 schemas), sessions, lineage and rows.
//! - [`display`]: the harness's own definition of a correct display, as [`display::Expected`].
//! - [`settings`]: the client's `display.resume_*` settings (from a `config.yaml`) and the classic
//!   CLI's resume recap under them: which messages it shows, cut how, and what it prints for the rest.
//! - [`integrity`]: data problems the database alone shows (a reply stored before its question,
//!   an utterance stored twice, a parent cycle or missing parent, ids against timestamps), by row.
//! - [`inspect`]: what a `state.db` holds and what a correct display of it is (no client).
//! - [`words`]: the word segmentation the oracle counts with (UAX-29, case-folded, CJK one each).
//! - [`oracle`]: pure comparison of a transcript against the expectation, producing findings; its
//!   [`oracle::wording`] is the one wording of verdicts and causes every report uses.
//! - [`verdict`]: where a verdict is made from a transcript and a database — one reading of the
//!   database ([`verdict::Basis::read`]), then the oracle on each transcript ([`verdict::Basis::check`]).
//! - [`runner`]: executes a scenario end to end and produces its verdict (steps, client session
//!   protocol, `repro`, `record`, result types, errors: one file each).
//! - [`triage`]: `bisect` over published client versions, `minimize`, and the signature of
//!   a verdict.
//! - [`report`]: human text and JSON verdicts, and [`report::html`], a browsable report
//!   (`--report DIR`): each check's screen with repeats highlighted and linked to their stored rows,
//!   the recordings and the provider log.
//! - [`interrupt`]: SIGINT/SIGTERM end the clients' process groups before the harness exits.
//! - `history` (feature `test-support`): generated compaction histories in the real schemas (a test
//!   double of the client's writes, for property tests, the differential test and benchmarks), in
//!   reused in-memory databases read by [`store::Store`] without a file or a copy.
//! - [`reference`](mod@reference): the client's own display read (`get_resume_conversations`) through one
//!   long-lived worker and one long-lived `SessionDB`, and its comparison with [`display`] (the
//!   differential test); also the fast offline tier of `minimize`.

pub mod cli;
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
pub mod reference;
pub mod report;
pub mod runner;
pub mod scenario;
pub mod settings;
pub mod store;
pub mod terminal;
pub mod triage;
pub mod verdict;
pub mod views;
pub mod words;
