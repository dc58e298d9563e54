//! The oracle on a saved recording and a `state.db`, without a client.
//!
//! What `check --cast` and `check --screen` do once their files are open: the recording replayed
//! and the database read at once, the recording cut into views and each judged against the
//! database as it was then ([`views::recorded`]), and the whole made one [`CheckResult`].

use std::path::Path;

use crate::display::{self, Role};
use crate::oracle;
use crate::runner::CheckResult;
use crate::scenario::Expectation;
use crate::settings::{ClientVersion, DisplaySettings};
use crate::store::{self, Store};
use crate::terminal::cast::{Format, Recording};
use crate::terminal::{self, Emulator, ReflowScreen, Screen, Size, Terminal, Transcript};
use crate::verdict::{self, Basis};
use crate::views::{self, recorded};

mod belonging;

/// Why a saved recording could not be checked.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// The `state.db` could not be read.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// The `state.db` gave no basis for a verdict.
    #[error(transparent)]
    Verdict(#[from] crate::verdict::Error),
    /// The `config.yaml` could not be read as the client's display settings.
    #[error(transparent)]
    Settings(#[from] crate::settings::SettingsError),
    /// The recording could not be replayed.
    #[error(transparent)]
    Cast(#[from] crate::terminal::cast::CastError),
    /// The provider log could not be read.
    #[error(transparent)]
    ProviderLog(#[from] crate::provider::LogError),
}

/// What [`check`] judges: the files, opened, and how to read them.
pub(crate) struct Request<'a> {
    /// The recording (asciicast v2 or v3) or, with `screen`, a screen copied from the terminal.
    pub(crate) recording: &'a Path,
    /// Whether `recording` is a pasted screen rather than an asciicast.
    pub(crate) screen: bool,
    /// A pasted screen's size, when given.
    pub(crate) size: Option<Size>,
    /// The name the check is reported under: the recording as the user named it.
    pub(crate) at: String,
    /// The `state.db` (a private copy is read).
    pub(crate) db: &'a Path,
    /// The session to check; `None`: the newest with messages.
    pub(crate) session: Option<&'a str>,
    /// The run's `provider.jsonl`: what the fake model said.
    pub(crate) provider_log: Option<&'a Path>,
    /// The `config.yaml` whose display settings the resume recap was drawn under.
    pub(crate) config: Option<&'a Path>,
    /// The emulator the recording is replayed into.
    pub(crate) terminal: Terminal,
    /// Whether the result keeps the transcript's text.
    pub(crate) transcript: bool,
    /// Whether the result keeps the history's lines.
    pub(crate) history: bool,
}

/// A check made: its result, the database it was made on, and how the recording was cut.
pub(crate) struct Judged {
    /// The check's result.
    pub(crate) result: CheckResult,
    /// The database's reading the check was made on.
    pub(crate) basis: Basis,
    /// How the recording was cut into views, in a sentence.
    pub(crate) cut_note: String,
    /// The recording's format when it has no timing (a pasted screen): what it cannot tell is
    /// worth a note.
    pub(crate) untimed: Option<Format>,
}

/// The check of `request`'s recording against its database and `expectation`.
pub(crate) fn check(request: &Request<'_>, expectation: Expectation) -> Result<Judged, Error> {
    // A provider log that is not one is refused before the long reads.
    let said = match request.provider_log {
        Some(path) => Some(crate::provider::said_from_log(path)?),
        None => None,
    };
    let (replayed, store, basis) = replay_and_read(request)?;
    let (store, basis) = as_recorded(&replayed, (store, basis), request.session)?;
    // The display settings the client's resume recap was drawn under, when given.
    let recap = match request.config {
        Some(config) => {
            let version = version_of(&store);
            Some((DisplaySettings::from_config_yaml(config, version)?, version))
        }
        None => None,
    };
    let with_recap = |basis: Basis| match &recap {
        Some((settings, version)) => basis.with_recap(settings, *version),
        None => basis,
    };
    let basis = with_recap(basis);
    let at = request.at.clone();
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
    let recorded = match request.terminal {
        Terminal::Vt100 => {
            recorded::judge::<Screen, _>(recording, steps, &store, read, said.as_ref())
        }
        Terminal::Reflow => {
            recorded::judge::<ReflowScreen, _>(recording, steps, &store, read, said.as_ref())
        }
    }?;
    let untimed = (!recording.timed()).then_some(recording.format);
    let (check, views) = if recorded.views.is_empty() {
        (
            basis.check(&at, &replayed.transcript, said.as_ref()),
            Vec::new(),
        )
    } else {
        views::combine(&at, &recorded.views, 0, &basis)
    };
    let typed = recording.inputs();
    let pasted = crate::terminal::behaviour::pastes_in(&typed);
    let mut check = check.with_input(
        &replayed.history,
        (&typed, &pasted),
        &basis.expected,
        said.as_ref().map(|s| s.user.as_slice()),
    );
    let questions: Vec<String> = basis
        .expected
        .messages
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.text.clone())
        .collect();
    let row_counts = oracle::count_rows(&replayed.history, &questions);
    check.findings.chrome_repeated = oracle::repeated_chrome(&replayed.history).len();
    let warnings = belonging::warnings(&replayed.history, &store, &basis);
    let transcript_text = request.transcript.then(|| replayed.transcript.text());
    let mut result = CheckResult::new(
        &basis,
        (check, Some(row_counts)),
        expectation,
        0,
        replayed.transcript,
        None,
    )
    .with_terminal_note(terminal::erase_note(replayed.erased))
    .with_views(views);
    result.cut = Some(recorded.cut);
    result.warnings = warnings;
    result.history = request.history.then_some(replayed.history);
    result.transcript_text = transcript_text;
    Ok(Judged {
        result,
        basis,
        cut_note: recorded.note(),
        untimed,
    })
}

/// The database `read` (and its basis for `session`) as it was when `replayed` ended: rows made
/// after it (the session resumed later) are no part of the recording. When the session checked
/// held nothing then, the database is not the recording's (warned about in the check) and is
/// read whole.
fn as_recorded(
    replayed: &Replayed,
    read: (Store, Basis),
    session: Option<&str>,
) -> Result<(Store, Basis), Error> {
    let Some((max, live)) = recorded::at_end(&replayed.recording, &replayed.steps, &read.0)? else {
        return Ok(read);
    };
    let then = read.0.as_of(max, &live)?;
    let basis = Basis::read(&then, session.into(), display::Surface::default());
    Ok(basis.map_or(read, |basis| (then, basis)))
}

/// `request`'s recording replayed and its database read with its basis.
fn replay_and_read(request: &Request<'_>) -> Result<(Replayed, Store, Basis), Error> {
    // The recording and the database are independent until the oracle: read both at once, on
    // two threads (a 1M-word check spends about a quarter of its time on the database side).
    // A recording that cannot be replayed is reported first, as when they were read in turn.
    let (replayed, read) = std::thread::scope(|scope| {
        let read = scope.spawn(|| -> Result<(Store, Basis), Error> {
            let store = Store::open(request.db)?;
            let basis = Basis::read(&store, request.session.into(), display::Surface::default())?;
            Ok((store, basis))
        });
        let replayed = replay(request, true);
        let read = read
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (replayed, read)
    });
    let replayed = replayed?;
    let (store, basis) = read?;
    Ok((replayed, store, basis))
}

/// The client version whose `config.yaml` rules apply to `store`: the one its schema says wrote it.
pub(crate) fn version_of(store: &Store) -> ClientVersion {
    match store.schema() {
        store::Schema::Uid => ClientVersion::Iot0_22,
        store::Schema::Legacy => ClientVersion::V0_19,
    }
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

/// `cast` replayed into `terminal`: its history lines, and its transcript and steps only with
/// `transcript`.
fn replay(request: &Request<'_>, transcript: bool) -> Result<Replayed, Error> {
    let recording = if request.screen {
        Recording::read_screen(request.recording, request.size)?
    } else {
        Recording::read(request.recording)?
    };
    match request.terminal {
        Terminal::Vt100 => replayed::<Screen>(recording, transcript),
        Terminal::Reflow => replayed::<ReflowScreen>(recording, transcript),
    }
}

fn replayed<E: Emulator>(recording: Recording, transcript: bool) -> Result<Replayed, Error> {
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
        history: screen.history_lines(),
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
