//! The fast offline tier of `minimize`.
//!
//! A candidate's signature read from the rows the client materializes for display, without a
//! terminal.
//!
//! [`Reference`] asks the client's own code — `SessionDB(copy).get_resume_conversations(session)`
//! through the long-lived worker of [`crate::reference::Reader`] — which rows its resume lists, on
//! a fresh copy of the candidate (the client may migrate the file it opens). The rows become a
//! transcript ([`transcript_of`]) and that transcript is judged by the same oracle `repro` runs on
//! the real client's screen ([`Basis::check`], the same basis: the candidate's own display
//! contract, recap settings included), once per display path of [`runner::REPRO_PATHS`], so the
//! [`Signature`] is made the same way as the real client's ([`Signature::of`] on the checks).
//!
//! The mapping (a listed row → transcript lines):
//! - rows of role `user` and `assistant` with text: their content as stored (as the client loaded
//!   it), one transcript line per line of the content, a blank line between rows;
//! - rows of role `tool` and rows with no text: left out (the classic CLI's resume recap hides tool
//!   output and draws nothing for a tool-call-only row);
//! - everything else (`system`, …): left out.
//!
//! What it can decide, and its limits:
//! - it sees what the client's *storage read* lists: a row listed twice or a carrier listed
//!   beside the original (repeats, with their cause and whether a carrier's reply is repeated),
//!   summary or notice text left in a listed row (internal text), a message not listed (missing),
//!   rows listed out of order;
//! - it does not see what the *rendering* does to the list: the recap's truncation and
//!   collapsing, wrapping, a display path that draws something else (the TUI), timing — so its
//!   signature need not equal the real client's. It is compared only with the offline signature
//!   of the original (offline to offline); the real client confirms (see the module above);
//! - when the original's offline signature shows no failure the tier cannot tell candidates
//!   apart, and every candidate goes to the real client.

use std::path::{Path, PathBuf};

use crate::client::{self, Ui};
use crate::display::Surface;
use crate::reference::{ClientRow, Reader};
use crate::runner;
use crate::settings::{ClientVersion, DisplaySettings};
use crate::store::Store;
use crate::terminal::Transcript;
use crate::triage::signature::Signature;
use crate::verdict::{Basis, Session};

/// A fast judge of candidates: the signature of resuming `session` of `db`, read offline.
pub(crate) trait Offline {
    /// The offline signature of `db` (never written: a fresh copy is read).
    fn signature(&mut self, db: &Path, session: &str) -> Result<Signature, OfflineError>;
}

/// Why the offline tier could not start or read a candidate.
#[derive(Debug, thiserror::Error)]
pub(crate) enum OfflineError {
    /// The client (whose venv the worker runs in) could not be provided.
    #[error(transparent)]
    Client(#[from] crate::client::ClientError),
    /// The user's `config.yaml` could not be read as the client's display settings.
    #[error(transparent)]
    Settings(#[from] crate::settings::SettingsError),
    /// The worker could not start or answer.
    #[error(transparent)]
    Reference(#[from] crate::reference::ReferenceError),
    /// The candidate could not be read or copied.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// The candidate gave no basis for a verdict.
    #[error(transparent)]
    Verdict(#[from] crate::verdict::Error),
    /// The scratch directory for the copies could not be made.
    #[error("cannot make a scratch directory for the offline reads")]
    Scratch(#[source] std::io::Error),
}

/// The client's own display read ([`Reader`]) as an [`Offline`] judge.
pub(crate) struct Reference {
    reader: Reader,
    ui: Ui,
    settings: DisplaySettings,
    version: ClientVersion,
    scratch: tempfile::TempDir,
    reads: usize,
}

impl Reference {
    /// Starts the worker in the venv of `client_spec`, with the display settings `repro` would use
    /// (`config`: the user's `config.yaml`).
    pub(crate) fn start(
        client_spec: &str,
        ui: Ui,
        config: Option<&Path>,
    ) -> Result<Reference, OfflineError> {
        let client = client::resolve(client_spec)?;
        let version = ClientVersion::from_spec(client.label()).unwrap_or(ClientVersion::Iot0_22);
        let settings = match config {
            Some(path) => DisplaySettings::from_config_yaml(path, version)?,
            None => DisplaySettings::wide(),
        };
        let reader = Reader::start(&client)?;
        let scratch = tempfile::Builder::new()
            .prefix("hermes-e2e-offline-")
            .tempdir()
            .map_err(OfflineError::Scratch)?;
        Ok(Reference {
            reader,
            ui,
            settings,
            version,
            scratch,
            reads: 0,
        })
    }

    /// A fresh path for the next copy (the previous one removed: a copy left behind only takes
    /// room in the scratch directory, removed with it).
    fn next_copy(&mut self) -> Result<PathBuf, OfflineError> {
        if self.reads > 0 {
            let old = self.scratch.path().join(format!("read-{}", self.reads));
            let _ = std::fs::remove_dir_all(old);
        }
        self.reads += 1;
        let dir = self.scratch.path().join(format!("read-{}", self.reads));
        std::fs::create_dir_all(&dir).map_err(OfflineError::Scratch)?;
        Ok(dir.join("state.db"))
    }
}

impl Offline for Reference {
    fn signature(&mut self, db: &Path, session: &str) -> Result<Signature, OfflineError> {
        let store = Store::open(db)?;
        let basis = Basis::read(&store, Session::Id(session), Surface::default())?;
        drop(store);
        let basis = if self.ui == Ui::Classic {
            basis.with_recap(&self.settings, self.version)
        } else {
            basis
        };
        let copy = self.next_copy()?;
        crate::store::copy_database(db, &copy)?;
        let rows = self.reader.read(&copy, session)?;
        Ok(signature_of(&basis, &rows))
    }
}

/// The signature of the display read `rows` against `basis`: one check per display path of
/// `repro`, each on [`transcript_of`] the rows.
pub(crate) fn signature_of(basis: &Basis, rows: &[ClientRow]) -> Signature {
    let transcript = transcript_of(rows);
    Signature {
        checks: runner::REPRO_PATHS
            .iter()
            .map(|at| {
                crate::triage::signature::CheckSignature::of(&basis.check(at, &transcript, None))
            })
            .collect(),
        stopped: false,
    }
}

/// The transcript the listed `rows` stand for (the mapping in the module documentation).
pub(crate) fn transcript_of(rows: &[ClientRow]) -> Transcript {
    let mut lines: Vec<String> = Vec::new();
    for row in rows {
        if !matches!(row.role.as_str(), "user" | "assistant") {
            continue;
        }
        let Some(text) = row
            .content
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
        else {
            continue;
        };
        if !lines.is_empty() {
            lines.push(String::new());
        }
        lines.extend(text.lines().map(str::to_owned));
    }
    Transcript::from_history_lines(&lines)
}
