//! Where a verdict is made from a transcript and a database.
//!
//! The one path every caller takes (`check --cast`, a scenario's `check` step, `repro`, the fixture
//! tests, the report test, the benchmarks).
//!
//! Two stages, so one reading of the database serves several transcripts (`repro` judges each
//! display path against the same reading):
//!
//! 1. [`Basis::read`]: from a [`Store`] the caller opened, pick the session ([`Session`]:
//!    the given id, or the newest one holding messages), project the display contract
//!    ([`display::expected`] on a [`Surface`]), and list what the database alone shows is wrong
//!    ([`integrity::data_problems`]). [`Basis::with_recap`] adds the messages the classic CLI's
//!    resume recap leaves out under the client's display settings ([`settings::not_on_recap`]).
//! 2. [`Basis::check`]: run the oracle on one transcript, with what the provider log says was
//!    said when there is one ([`Basis::check_view`]: on one view of a live screen).
//!
//! How a scenario's expectation compares with the [`Check`] is
//! [`Expectation::mismatches`](crate::scenario::Expectation::mismatches).

use std::path::PathBuf;

use crate::display::{self, Expected, Surface};
use crate::integrity::{self, DataProblem};
use crate::oracle::{self, Check, Said};
use crate::settings::{self, ClientVersion, DisplaySettings};
use crate::store::{Store, StoreError};
use crate::terminal::Transcript;

/// Which session of the database was displayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Session<'a> {
    /// The most recently started session holding at least one message (a client that then ran
    /// `/resume ID`, or was started and left, may have written an empty session of its own).
    Latest,
    /// This session id; an id that is not in the database is [`StoreError::NoSuchSession`].
    Id(&'a str),
}

impl<'a> From<Option<&'a str>> for Session<'a> {
    /// `Some(id)` is that session, `None` the latest with messages.
    fn from(id: Option<&'a str>) -> Self {
        id.map_or(Session::Latest, Session::Id)
    }
}

/// Why the database gave no basis for a verdict.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading the database failed, or the session asked for is not in it.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// [`Session::Latest`] in a database without any session holding messages.
    #[error(
        "`{}` has no session with messages ({}): give the `state.db` of the home the \
         conversation ran in (`$HERMES_HOME/state.db`, by default ~/.hermes/state.db)",
        path.display(),
        if *sessions == 0 {
            "it holds no session at all: the client writes one when it starts".to_owned()
        } else {
            format!("it holds {sessions} session(s), none with a message sent")
        }
    )]
    NoSessionWithMessages {
        /// The database (its user-facing path).
        path: PathBuf,
        /// How many sessions it holds.
        sessions: usize,
    },
}

/// Everything a verdict needs from the database, read once: the displayed session, the display
/// contract, the data problems and the messages the display may leave out.
#[derive(Debug, Clone)]
pub struct Basis {
    /// The displayed session's id.
    pub(crate) session: String,
    /// The correct display of it.
    pub expected: Expected,
    /// What the database alone shows is wrong.
    data_problems: Vec<DataProblem>,
    /// Messages (indexes into [`Expected::messages`]) the display may leave out (see
    /// [`oracle::Context::optional`]); empty unless [`Basis::with_recap`] set them.
    optional: Vec<usize>,
    /// The words of [`Basis::expected`], made with it (on the thread that reads the database,
    /// while `check --cast` replays the recording on another).
    prepared: oracle::PreparedExpected,
}

impl Basis {
    /// Reads the basis of a verdict on `session` of `store`, displayed on `surface`.
    pub fn read(store: &Store, session: Session<'_>, surface: Surface) -> Result<Basis, Error> {
        let session = Basis::session(store, session)?;
        // One reading of the rows serves the projection and the data problems (which need the
        // projection with tool output: the same one when the surface shows tool output).
        let lineage = store.lineage_ids(&session)?;
        let rows = store.rows(&lineage)?;
        let expected =
            display::expected_from_rows(store, &session, lineage.clone(), &rows, surface);
        let with_tools = Surface { tool_output: true };
        let data_problems = match store.sessions() {
            Ok(sessions) => {
                let classes = display::classify(store, &rows);
                let other;
                let projected = if surface == with_tools {
                    &expected
                } else {
                    other =
                        display::expected_from_rows(store, &session, lineage, &rows, with_tools);
                    &other
                };
                integrity::data_problems_from_rows(&sessions, &session, &rows, &classes, projected)
            }
            Err(e) => return Err(e.into()),
        };
        Ok(Basis {
            session,
            prepared: oracle::PreparedExpected::new(&expected),
            expected,
            data_problems,
            optional: Vec::new(),
        })
    }

    /// The basis of a verdict on a data export of `session` (the JSONL export): its live rows as
    /// stored ([`display::live_rows`]), each once; no data problems are looked for.
    pub(crate) fn exported(store: &Store, session: Session<'_>) -> Result<Basis, Error> {
        let session = Basis::session(store, session)?;
        let rows = store.rows(std::slice::from_ref(&session))?;
        let expected = display::live_rows(&session, &rows);
        Ok(Basis {
            session,
            prepared: oracle::PreparedExpected::new(&expected),
            expected,
            data_problems: Vec::new(),
            optional: Vec::new(),
        })
    }

    /// The basis of a verdict on one segment of a lineage export (`--lineage logical`): the
    /// display contract's projection of `session` alone, as if it had no ancestors, on
    /// `surface`; no data problems are looked for.
    pub(crate) fn segment(
        store: &Store,
        session: &str,
        surface: Surface,
    ) -> Result<Basis, StoreError> {
        let lineage = vec![session.to_owned()];
        let rows = store.rows(&lineage)?;
        let expected = display::expected_from_rows(store, session, lineage, &rows, surface);
        Ok(Basis {
            session: session.to_owned(),
            prepared: oracle::PreparedExpected::new(&expected),
            expected,
            data_problems: Vec::new(),
            optional: Vec::new(),
        })
    }

    /// The basis of a verdict on `expected` alone, with no database behind it: no data problems,
    /// no message optional. [`Basis::check`] on it compares a transcript with `expected` and
    /// nothing else.
    pub fn from_expected(expected: Expected) -> Basis {
        Basis {
            session: expected.session_id.clone(),
            prepared: oracle::PreparedExpected::new(&expected),
            expected,
            data_problems: Vec::new(),
            optional: Vec::new(),
        }
    }

    /// The id of `session` in `store`.
    fn session(store: &Store, session: Session<'_>) -> Result<String, Error> {
        Ok(match session {
            Session::Id(id) => id.to_owned(),
            Session::Latest => match store.latest_session_with_messages()? {
                Some(session) => session.id,
                None => {
                    return Err(Error::NoSessionWithMessages {
                        path: store.path().to_owned(),
                        sessions: store.sessions()?.len(),
                    })
                }
            },
        })
    }

    /// The same basis for a client whose classic CLI drew its resume recap under `settings`: the
    /// messages the recap does not draw are optional.
    pub(crate) fn with_recap(
        mut self,
        settings: &DisplaySettings,
        version: ClientVersion,
    ) -> Basis {
        self.optional = settings::not_on_recap(settings, version, &self.expected);
        self
    }

    /// The oracle's check of `transcript` against this basis, at the checkpoint `at`; `said` is
    /// what the provider log says was said (scenario runs). The whole transcript is one recap
    /// view of the session.
    pub fn check(&self, at: &str, transcript: &Transcript, said: Option<&Said>) -> Check {
        self.check_view(
            at,
            transcript,
            said,
            &Rules {
                recap: true,
                ..Rules::default()
            },
        )
    }

    /// The oracle's check of one view of a live screen (`views.rs`) against this basis,
    /// under the view's `rules`.
    pub(crate) fn check_view(
        &self,
        at: &str,
        transcript: &Transcript,
        said: Option<&Said>,
        rules: &Rules,
    ) -> Check {
        let optional = if rules.recap {
            &self.optional
        } else {
            &rules.optional
        };
        oracle::check_prepared(
            at,
            transcript,
            &self.expected,
            &self.prepared,
            &oracle::Context {
                said,
                data_problems: &self.data_problems,
                optional,
                allowed: rules.allowed.as_deref(),
                internal_redrawn: &rules.internal_redrawn,
                taken_back_here: &rules.taken_back_here,
            },
        )
    }

    /// What the database alone shows is wrong.
    pub(crate) fn data_problems(&self) -> &[DataProblem] {
        &self.data_problems
    }
}

/// What one view may draw of a [`Basis`]: the oracle's per-view allowances
/// (`oracle::Context`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rules {
    /// How often the view may draw each message (indexes into [`Expected::messages`]); `None`:
    /// once each.
    pub allowed: Option<Vec<usize>>,
    /// Messages the view need not draw (drawn, allowed as `allowed` says).
    pub optional: Vec<usize>,
    /// Taken-back messages the view may draw once.
    pub taken_back_here: Vec<usize>,
    /// Internal texts an earlier view of the same client process drew, or the view redraws
    /// where the client erased them: not counted again.
    pub internal_redrawn: Vec<usize>,
    /// Whether the recap's display settings apply (a recap view).
    pub recap: bool,
}
