//! The client's own display read, through one long-lived worker.
//!
//! The client's own display read, for the differential test of the display model and the fast
//! offline tier of `minimize` ([`crate::triage::minimize::offline`]).
//!
//! Input: a client (its venv) and `state.db` files. [`Reader`] runs one long-lived Python worker in
//! the client's venv (`reference_worker.py`) that answers `SessionDB(db).get_resume_conversations(id)`
//! — the rows the client's resume materializes for display — one JSON line per request, so a
//! property test pays the interpreter start-up once, not per case; with
//! [`Reader::load_and_read`] it also opens (and migrates) one `SessionDB` once, not per case, and
//! loads each case's rows into it (the worker's write-side triggers dropped, so the rows read are
//! the generated ones). Output: [`ClientRow`]s, and
//! with [`compare`] the [`Disagreement`]s between them and the harness's own [`Expected`].
//!
//! This compares the client's *storage read*, not its rendering: what the terminal shows is checked
//! end to end by the scenarios. Disagreements are classified ([`Class`]); the classes the real
//! client was measured to produce on screen are [`Class::is_known_client_bug`].

#[cfg(any(test, feature = "test-support"))]
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::client::{self, Client};
#[cfg(any(test, feature = "test-support"))]
use crate::display::{Expected, RowKind};

/// The worker script, written next to the worker's private `HERMES_HOME`.
const WORKER: &str = include_str!("reference_worker.py");
/// How long one read may take (the first one imports the client: a few seconds).
const READ_DEADLINE: Duration = Duration::from_secs(60);

/// Everything that can go wrong talking to the worker.
#[derive(Debug, thiserror::Error)]
pub enum ReferenceError {
    /// The worker could not be started.
    #[error("cannot start the client's display read ({python})")]
    Start {
        /// The interpreter.
        python: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A request could not be written to the worker (it died).
    #[error("cannot write a request to the client's display read")]
    Request(#[source] std::io::Error),
    /// The worker did not answer in time, or died before it answered.
    #[error(
        "the client's display read did not reply within {} s (worker exit status: {status})",
        READ_DEADLINE.as_secs()
    )]
    NoReply {
        /// The worker's exit status, if it has exited.
        status: String,
        /// Why the wait ended.
        source: std::sync::mpsc::RecvTimeoutError,
    },
    /// The worker answered what is not a reply.
    #[error("the client's display read answered `{line}`, which is not a reply")]
    Reply {
        /// What it answered.
        line: String,
        /// Why it is not a reply.
        source: serde_json::Error,
    },
    /// The client raised an exception reading this database.
    #[error("the client could not read `{db}`: {error}")]
    Client {
        /// The database.
        db: PathBuf,
        /// The exception.
        error: String,
    },
}

/// One row of the client's display history.
#[derive(Debug, Clone, PartialEq, serde::Deserialize, serde::Serialize)]
pub struct ClientRow {
    /// `messages.id` (`_row_id`).
    pub(crate) id: Option<i64>,
    /// The role.
    pub(crate) role: String,
    /// The content as the client loaded it.
    pub(crate) content: Option<String>,
}

#[derive(serde::Deserialize)]
struct Reply {
    ok: bool,
    #[serde(default)]
    rows: Vec<ClientRow>,
    #[serde(default)]
    error: String,
}

/// A running worker, in its own process group registered with `interrupt` (a SIGINT to
/// the harness kills it). Killed on drop.
pub struct Reader {
    child: Child,
    _registered: crate::interrupt::Registered,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    _home: tempfile::TempDir,
}

impl Reader {
    /// Starts the worker with the interpreter of `client`'s venv and the client's allowlisted
    /// environment (a private `HERMES_HOME`).
    pub fn start(client: &Client) -> Result<Reader, ReferenceError> {
        let python = python_of(&client.executable);
        let start_err = |source| ReferenceError::Start {
            python: python.clone(),
            source,
        };
        let home = tempfile::Builder::new()
            .prefix("hermes-e2e-reference-")
            .tempdir()
            .map_err(start_err)?;
        let script = home.path().join("reference_worker.py");
        std::fs::write(&script, WORKER).map_err(start_err)?;
        let hermes_home = home.path().join("home");
        let user_home = home.path().join("user");
        for d in [&hermes_home, &user_home] {
            std::fs::create_dir_all(d).map_err(start_err)?;
        }
        let mut child = Command::new(&python)
            .arg(&script)
            .env_clear()
            .envs(client::environment(&hermes_home, &user_home))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(start_err)?;
        let registered = crate::interrupt::register(child.id() as i32);
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Reader {
            child,
            _registered: registered,
            stdin,
            lines,
            _home: home,
        })
    }

    /// The client's display history of `session` in `db`, read by a `SessionDB` opened on `db` for
    /// this request (the file may be migrated by the client: pass a scratch copy).
    pub fn read(&mut self, db: &Path, session: &str) -> Result<Vec<ClientRow>, ReferenceError> {
        self.request(db, serde_json::json!({"db": db, "session": session}))
    }

    /// The client's display history of `session` in the rows of `db`: the worker copies the rows
    /// of `sessions`, `messages` and `system_prompts` (the columns both have, ids kept) into its
    /// own database, which one `SessionDB`, opened and migrated once per worker, then reads; the
    /// client's write-side triggers on those tables (FTS index, display order, uid minting) are
    /// dropped there once, so the rows read are exactly the rows of `db`. Opening a `SessionDB`
    /// is most of the cost of [`Reader::read`]; `db` is only read. The differential test
    /// (`loaded_rows_read_like_a_fresh_sessiondb`) checks that both give the same rows on
    /// generated histories.
    #[cfg(any(test, feature = "test-support"))]
    pub fn load_and_read(
        &mut self,
        db: &Path,
        session: &str,
    ) -> Result<Vec<ClientRow>, ReferenceError> {
        self.request(db, serde_json::json!({"load": db, "session": session}))
    }

    /// Sends one request about `db` and waits for its reply.
    fn request(
        &mut self,
        db: &Path,
        request: serde_json::Value,
    ) -> Result<Vec<ClientRow>, ReferenceError> {
        let request = request.to_string();
        writeln!(self.stdin, "{request}")
            .and_then(|()| self.stdin.flush())
            .map_err(ReferenceError::Request)?;
        let line = self.lines.recv_timeout(READ_DEADLINE).map_err(|source| {
            let status = self.child.try_wait().ok().flatten();
            ReferenceError::NoReply {
                status: status.map_or("still running".into(), |s| s.to_string()),
                source,
            }
        })?;
        let reply: Reply = serde_json::from_str(&line).map_err(|source| ReferenceError::Reply {
            line: line.clone(),
            source,
        })?;
        if reply.ok {
            Ok(reply.rows)
        } else {
            Err(ReferenceError::Client {
                db: db.to_path_buf(),
                error: reply.error,
            })
        }
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The interpreter of the venv `executable` belongs to: `python` beside it, else its shebang.
fn python_of(executable: &Path) -> PathBuf {
    if let Some(dir) = executable.parent() {
        for name in ["python", "python3"] {
            let p = dir.join(name);
            if p.is_file() {
                return p;
            }
        }
    }
    std::fs::read_to_string(executable)
        .ok()
        .and_then(|t| {
            t.lines()
                .next()
                .and_then(|l| l.strip_prefix("#!"))
                .map(|l| PathBuf::from(l.split_whitespace().next().unwrap_or("python3")))
        })
        .unwrap_or_else(|| PathBuf::from("python3"))
}

/// What kind of disagreement between the client's display read and the display model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[cfg(any(test, feature = "test-support"))]
pub enum Class {
    /// A summary carrier listed beside another copy of the reply it carries (rotating
    /// compaction: the original stays live in the parent). Measured on screen: the reply is shown
    /// twice (`scenarios/compress/rotating_resume.toml`).
    CarrierBesideOriginal,
    /// A summary carrier listed with its whole content: the summary and handoff text around the
    /// carried reply. Measured on screen: the summary is shown (`internal_text_shown`).
    CarrierWithSummary,
    /// A standalone summary row listed as a message. The classic CLI recap
    /// (`_collect_resume_entries`) has no summary filter: it draws the row as an assistant or user
    /// entry (read in the client's code; no scenario pins it yet).
    SummaryListed,
    /// A user row that compaction merged with a client notice, listed with the notice. The recap
    /// draws user content as stored (`_user_display_text`), notice included (read in the client's
    /// code; no scenario pins it yet).
    MergedNoticeShown,
    /// A pruned tool stub listed beside the archived tool output it replaced. The client's
    /// display identity (`_display_dedupe_key`) includes the content, so the stub and its payload
    /// are two entries (read in the client's code; the CLI recap hides tool rows, the export
    /// does not).
    StubBesidePayload,
    /// A user message listed twice: its original and the copy compaction merged with a client
    /// notice. The client's display identity includes the content and normalizes only user
    /// handoff carriers, not `[System: …]` notices (read in `_display_dedupe_key`).
    MergedBesideOriginal,
    /// Two or more copies of one logical message listed, no carrier, stub or merged row among
    /// them.
    Duplicate,
    /// A logical message with no row listed.
    Missing,
    /// A listed row that is no message of the display contract (superseded, model-only, hidden).
    NotAMessage,
    /// A logical message listed after one that comes after it.
    OutOfOrder,
    /// A row's listed text differs from the text the contract displays for it (a merged notice
    /// left in, …).
    TextDiffers,
}

#[cfg(any(test, feature = "test-support"))]
impl Class {
    /// Whether this class is a known client bug (counted, not failed): measured on screen by a
    /// scenario, or read in the client's recap code (see each variant).
    pub fn is_known_client_bug(self) -> bool {
        matches!(
            self,
            Class::CarrierBesideOriginal
                | Class::CarrierWithSummary
                | Class::SummaryListed
                | Class::MergedNoticeShown
                | Class::StubBesidePayload
                | Class::MergedBesideOriginal
        )
    }
}

/// One disagreement.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg(any(test, feature = "test-support"))]
pub struct Disagreement {
    /// Its class.
    pub class: Class,
    /// The listed rows involved.
    pub(crate) rows: Vec<i64>,
    /// The logical message involved (index into `Expected::messages`), if any.
    pub(crate) message: Option<usize>,
}

/// Compares the client's display read with the display model's expectation on the surface that
/// shows everything (`Surface { tool_output: true }`). `kinds` classifies every stored row of the
/// lineage (see [`crate::display::classify`]); rows the contract draws as labels (events,
/// notices) are not messages on either side and are skipped.
#[cfg(any(test, feature = "test-support"))]
pub fn compare(
    expected: &Expected,
    kinds: &HashMap<i64, RowKind>,
    client: &[ClientRow],
) -> Vec<Disagreement> {
    let message_of: HashMap<i64, usize> = expected
        .messages
        .iter()
        .enumerate()
        .flat_map(|(n, m)| m.rows.iter().map(move |r| (r.id, n)))
        .collect();
    let mut out = Vec::new();
    let mut listed: HashMap<usize, Vec<i64>> = HashMap::new();
    let mut order: Vec<usize> = Vec::new();
    for row in client {
        let Some(id) = row.id else {
            out.push(Disagreement {
                class: Class::NotAMessage,
                rows: Vec::new(),
                message: None,
            });
            continue;
        };
        let kind = kinds.get(&id).copied();
        if matches!(
            kind,
            Some(RowKind::Event | RowKind::Notice | RowKind::System)
        ) {
            continue;
        }
        match message_of.get(&id) {
            Some(&n) => {
                let ids = listed.entry(n).or_default();
                if ids.is_empty() {
                    order.push(n);
                }
                ids.push(id);
                let want = expected.messages[n].text.as_str();
                out.extend(text_differs(row, id, kind, n, want));
            }
            None => out.push(Disagreement {
                class: if kind == Some(RowKind::Summary) {
                    Class::SummaryListed
                } else {
                    Class::NotAMessage
                },
                rows: vec![id],
                message: None,
            }),
        }
    }
    out.extend(missing_or_repeated(expected, kinds, &listed));
    let mut highest: Option<usize> = None;
    for &n in &order {
        if highest.is_some_and(|h| n < h) {
            out.push(Disagreement {
                class: Class::OutOfOrder,
                rows: listed[&n].clone(),
                message: Some(n),
            });
        }
        highest = highest.max(Some(n));
    }
    out
}

/// The disagreement, if any, between the text the client loaded for row `id` (of kind `kind`)
/// and `want`, the text of the logical message `n` it is a copy of.
#[cfg(any(test, feature = "test-support"))]
fn text_differs(
    row: &ClientRow,
    id: i64,
    kind: Option<RowKind>,
    n: usize,
    want: &str,
) -> Option<Disagreement> {
    let text = row.content.as_deref().unwrap_or("").trim();
    let known = match kind {
        Some(RowKind::Carrier) => Some(Class::CarrierWithSummary),
        Some(RowKind::MergedNotice) => Some(Class::MergedNoticeShown),
        _ => None,
    };
    if let Some(class) = known.filter(|_| text != want) {
        Some(Disagreement {
            class,
            rows: vec![id],
            message: Some(n),
        })
    } else if text != want && kind != Some(RowKind::PrunedStub) {
        Some(Disagreement {
            class: Class::TextDiffers,
            rows: vec![id],
            message: Some(n),
        })
    } else {
        None
    }
}

/// The logical messages the client lists no row of, or several: `listed` maps each message to
/// the ids of its rows the client listed.
#[cfg(any(test, feature = "test-support"))]
fn missing_or_repeated(
    expected: &Expected,
    kinds: &HashMap<i64, RowKind>,
    listed: &HashMap<usize, Vec<i64>>,
) -> Vec<Disagreement> {
    let mut out = Vec::new();
    for (n, m) in expected.messages.iter().enumerate() {
        match listed.get(&n) {
            None => out.push(Disagreement {
                class: Class::Missing,
                rows: m.rows.iter().map(|r| r.id).collect(),
                message: Some(n),
            }),
            Some(ids) if ids.len() > 1 => {
                let any = |k: RowKind| ids.iter().any(|id| kinds.get(id) == Some(&k));
                out.push(Disagreement {
                    class: if any(RowKind::Carrier) {
                        Class::CarrierBesideOriginal
                    } else if any(RowKind::PrunedStub) {
                        Class::StubBesidePayload
                    } else if any(RowKind::MergedNotice) {
                        Class::MergedBesideOriginal
                    } else {
                        Class::Duplicate
                    },
                    rows: ids.clone(),
                    message: Some(n),
                });
            }
            Some(_) => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::{self, Surface};
    use crate::store::Store;

    /// The rotating fixture, and the client's display read of it as measured (row order of
    /// `get_resume_conversations` on this file: the carrier listed last).
    fn rotating() -> (Expected, HashMap<i64, RowKind>, Vec<ClientRow>) {
        let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/iot-0.22.2.post1-rotating-resume/state.db");
        let store = Store::open(&path).unwrap();
        let tip = store.latest_session().unwrap().unwrap().id;
        let e = display::expected(&store, &tip, Surface { tool_output: true }).unwrap();
        let rows = store.rows(&e.lineage).unwrap();
        let kinds = rows
            .iter()
            .zip(display::classify(&store, &rows))
            .map(|(r, c)| (r.id, c.kind))
            .collect();
        let content: HashMap<i64, Option<String>> =
            rows.iter().map(|r| (r.id, r.content.clone())).collect();
        let client = [13, 14, 15, 4, 5, 6, 7, 8, 9, 10, 17, 18, 16]
            .iter()
            .map(|&id| ClientRow {
                id: Some(id),
                role: "x".into(),
                content: content[&id].clone(),
            })
            .collect();
        (e, kinds, client)
    }

    fn classes(d: &[Disagreement]) -> Vec<(Class, Vec<i64>)> {
        let mut v: Vec<_> = d.iter().map(|d| (d.class, d.rows.clone())).collect();
        v.sort();
        v
    }

    #[test]
    fn measured_rotating_read_is_the_known_carrier_bugs_only() {
        let (e, kinds, client) = rotating();
        assert_eq!(
            classes(&compare(&e, &kinds, &client)),
            vec![
                (Class::CarrierBesideOriginal, vec![10, 16]),
                (Class::CarrierWithSummary, vec![16]),
            ]
        );
    }

    #[test]
    fn missing_reordered_and_unknown_rows_are_new_disagreements() {
        let (e, kinds, mut client) = rotating();
        client.retain(|r| r.id != Some(5)); // a user message lost
        client.swap(0, 1); // two messages swapped
        client.push(ClientRow {
            id: Some(999),
            role: "assistant".into(),
            content: Some("?".into()),
        });
        let got = classes(&compare(&e, &kinds, &client));
        assert!(got.contains(&(Class::Missing, vec![5])), "{got:?}");
        assert!(got.contains(&(Class::OutOfOrder, vec![13])), "{got:?}");
        assert!(got.contains(&(Class::NotAMessage, vec![999])), "{got:?}");
        assert!(got.iter().all(|(c, _)| *c != Class::Duplicate));
        assert!(!Class::Missing.is_known_client_bug());
    }

    #[test]
    fn a_text_change_outside_known_forms_is_caught() {
        let (e, kinds, mut client) = rotating();
        client[0].content = Some("What did a lighthouse keeper do all night?".into());
        let got = classes(&compare(&e, &kinds, &client));
        assert!(got.contains(&(Class::TextDiffers, vec![13])), "{got:?}");
    }
}
