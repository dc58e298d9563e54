//! Unit tests of the error chain: each cause kept out of its error's message, said once.

use std::error::Error;
use std::path::{Path, PathBuf};

use super::{one_line, Chain};
use crate::cli::check_command::ExpectError;
use crate::cli::input::InputError;
use crate::driver::DriverError;
use crate::provider::LogError;
use crate::reference::ReferenceError;
use crate::scenario::{ExpectationError, ScenarioError};
use crate::settings::yaml::{IntError, YamlError};
use crate::settings::SettingsError;
use crate::store::StoreError;
use crate::terminal::cast::CastError;
use crate::triage::minimize::model::BuildError;
use crate::triage::minimize::offline::OfflineError;

/// A real I/O error: reading a file that is not there.
fn io() -> std::io::Error {
    std::fs::read("/nonexistent/hermes-e2e/chain-test").unwrap_err()
}

/// A real SQLite error: a query on a file that is not a database.
fn sqlite() -> rusqlite::Error {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("not-a-database");
    std::fs::write(
        &path,
        "this is text, not a SQLite database, and it is long enough\n".repeat(20),
    )
    .unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
        r.get::<_, i64>(0)
    })
    .unwrap_err()
}

/// A real TOML error: a key without a value.
fn toml() -> toml::de::Error {
    toml::from_str::<toml::Table>("key = ").unwrap_err()
}

/// A real JSON error: an object that does not close.
fn json() -> serde_json::Error {
    serde_json::from_str::<serde_json::Value>("{").unwrap_err()
}

fn path() -> PathBuf {
    PathBuf::from("/home/u/.hermes/state.db")
}

fn store_io() -> StoreError {
    StoreError::Io {
        path: path(),
        source: io(),
    }
}

fn runner_io() -> crate::runner::Error {
    crate::runner::Error::Read {
        path: path(),
        source: io(),
    }
}

/// Every error of the crate that has a cause, one of each variant carrying one (transparent
/// wrappers once each, over an error with a cause), built with a real cause.
fn errors_with_a_cause() -> Vec<Box<dyn Error>> {
    [run_errors(), command_errors(), read_errors()]
        .into_iter()
        .flatten()
        .collect()
}

/// The driver's, the provider log's, a recording's and a run's errors.
fn run_errors() -> Vec<Box<dyn Error>> {
    use crate::runner::Error as Run;
    let p = path;
    let args = || vec!["sessions".to_owned(), "export".to_owned()];
    vec![
        Box::new(DriverError::Spawn {
            program: p(),
            source: io().into(),
        }),
        Box::new(DriverError::WindowSize {
            program: p(),
            source: io(),
        }),
        Box::new(DriverError::Io {
            what: "polling the PTY".into(),
            source: io(),
        }),
        Box::new(LogError::Io {
            path: p(),
            source: io(),
        }),
        Box::new("70000x40".parse::<crate::terminal::Size>().unwrap_err()),
        Box::new(CastError::Io {
            path: p(),
            source: io(),
        }),
        Box::new(Run::Client(crate::client::ClientError::Io {
            spec: "hermes-agent==0.19.0".into(),
            dir: p(),
            source: io(),
        })),
        Box::new(Run::Driver(DriverError::Io {
            what: "reading".into(),
            source: io(),
        })),
        Box::new(Run::Store(store_io())),
        Box::new(Run::Settings(SettingsError::Read {
            path: p(),
            source: io(),
        })),
        Box::new(Run::Create {
            path: p(),
            source: io(),
        }),
        Box::new(Run::Write {
            path: p(),
            source: io(),
        }),
        Box::new(runner_io()),
        Box::new(Run::Remove {
            path: p(),
            source: io(),
        }),
        Box::new(Run::Copy {
            path: p(),
            source: io(),
        }),
        Box::new(Run::Config {
            home: p(),
            source: io(),
        }),
        Box::new(Run::Provider(io())),
        Box::new(Run::CliSpawn {
            program: p(),
            args: args(),
            source: io(),
        }),
        Box::new(Run::CliWait {
            args: args(),
            source: io(),
        }),
        Box::new(Run::NotJsonl {
            path: p(),
            source: json(),
        }),
        Box::new(Run::Publish {
            kept: p(),
            source: io(),
        }),
    ]
}

/// The offline worker's, the settings', the verdict's and the commands' errors.
fn command_errors() -> Vec<Box<dyn Error>> {
    let p = path;
    vec![
        Box::new(ReferenceError::Start {
            python: p(),
            source: io(),
        }),
        Box::new(ReferenceError::Request(io())),
        Box::new(ReferenceError::NoReply {
            status: "still running".into(),
            source: std::sync::mpsc::RecvTimeoutError::Timeout,
        }),
        Box::new(ReferenceError::Reply {
            line: "{".into(),
            source: json(),
        }),
        Box::new(OfflineError::Reference(ReferenceError::Request(io()))),
        Box::new(crate::verdict::Error::Store(store_io())),
        Box::new(SettingsError::Read {
            path: p(),
            source: io(),
        }),
        Box::new(SettingsError::Yaml {
            origin: "config.yaml".into(),
            source: YamlError::Documents(2),
        }),
        Box::new(SettingsError::Value {
            origin: "config.yaml".into(),
            key: "display.resume_max_user_chars".into(),
            source: IntError::NotInteger("ten".into()),
        }),
        Box::new(InputError::Stdin {
            flag: "--db",
            source: io(),
        }),
        Box::new(InputError::Read {
            flag: "--db",
            path: p(),
            source: io(),
        }),
        Box::new(crate::cli::Error::Stdout(io())),
        Box::new(crate::cli::Error::Scenario(ScenarioError::Io {
            path: p(),
            source: io(),
        })),
        Box::new(crate::cli::Error::Run(runner_io())),
        Box::new(crate::cli::Error::Store(store_io())),
        Box::new(crate::cli::Error::Create {
            path: p(),
            source: io(),
        }),
        Box::new(crate::cli::Error::Write {
            path: p(),
            source: io(),
        }),
        Box::new(crate::cli::Error::Report {
            dir: p(),
            source: io(),
        }),
        Box::new(crate::cli::Error::Json(json())),
        Box::new(crate::cli::Error::from(ExpectError::Read {
            path: p(),
            source: io(),
        })),
        Box::new(ExpectError::Read {
            path: p(),
            source: io(),
        }),
        Box::new(ExpectError::Invalid {
            path: p(),
            source: ExpectationError::Toml(toml()),
        }),
        Box::new(ExpectError::Findings(ExpectationError::Cause(
            "neither".into(),
        ))),
    ]
}

/// The scenario's, the store's, the client's and the triage's errors.
fn read_errors() -> Vec<Box<dyn Error>> {
    let p = path;
    vec![
        Box::new(ScenarioError::Io {
            path: p(),
            source: io(),
        }),
        Box::new(ScenarioError::Parse {
            path: p(),
            source: Box::new(toml()),
        }),
        Box::new(ScenarioError::IncludeRead {
            path: p(),
            line: 3,
            included: p(),
            source: io(),
        }),
        Box::new(ScenarioError::IncludeParse {
            path: p(),
            line: 3,
            included: p(),
            source: Box::new(toml()),
        }),
        Box::new(store_io()),
        Box::new(StoreError::Sqlite {
            path: p(),
            source: sqlite(),
        }),
        Box::new(crate::client::ClientError::Io {
            spec: "hermes-agent==0.19.0".into(),
            dir: p(),
            source: io(),
        }),
        Box::new(crate::client::ClientError::PythonStart {
            spec: "hermes-agent==0.19.0".into(),
            python: "python3".into(),
            source: io(),
        }),
        Box::new(crate::triage::versions::VersionsError::IndexStart {
            package: "hermes-agent".into(),
            python: "python3".into(),
            source: io(),
        }),
        Box::new(BuildError::Copy(store_io())),
        Box::new(BuildError::Sqlite {
            path: p(),
            source: sqlite(),
        }),
        Box::new(OfflineError::Store(store_io())),
        Box::new(OfflineError::Scratch(io())),
        Box::new(crate::triage::minimize::Error::Store(store_io())),
        Box::new(crate::triage::minimize::Error::Original(runner_io())),
        Box::new(crate::triage::minimize::Error::Final(runner_io())),
        Box::new(crate::triage::minimize::Error::Build(BuildError::Copy(
            store_io(),
        ))),
        Box::new(crate::triage::minimize::Error::Io {
            path: p(),
            source: io(),
        }),
    ]
}

/// Asserts that `error` has a cause and that its message does not say it.
pub(crate) fn assert_cause_not_in_message(error: &(dyn Error + 'static)) {
    let message = error.to_string();
    let cause = error
        .source()
        .unwrap_or_else(|| panic!("`{message}` has no source"))
        .to_string();
    assert!(!cause.is_empty(), "`{message}`: its source says nothing");
    assert!(
        !message.contains(&cause),
        "the message says its cause again:\n  message: {message}\n  cause:   {cause}"
    );
}

#[test]
fn no_message_contains_its_cause() {
    let errors = errors_with_a_cause();
    for error in &errors {
        assert_cause_not_in_message(error.as_ref());
    }
}

#[test]
fn the_chain_says_each_cause_once_on_its_own_line() {
    let error = crate::cli::Error::Scenario(ScenarioError::Io {
        path: PathBuf::from("x.toml"),
        source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
    });
    assert_eq!(
        Chain(&error).to_string(),
        "cannot read scenario `x.toml`\n  caused by: no such file"
    );
    assert_eq!(
        one_line(&error),
        "cannot read scenario `x.toml`: no such file"
    );
}

#[test]
fn a_chain_of_three_names_every_cause_in_order() {
    let error = crate::triage::minimize::Error::Original(crate::runner::Error::Read {
        path: PathBuf::from("home"),
        source: std::io::Error::other("denied"),
    });
    assert_eq!(
        Chain(&error).to_string(),
        "the original could not be reproduced\n  caused by: cannot read `home`\n  caused by: denied"
    );
    assert_eq!(
        one_line(&error),
        "the original could not be reproduced: cannot read `home`: denied"
    );
}

#[test]
fn a_sqlite_refusal_is_kept_as_the_cause() {
    let error = StoreError::Sqlite {
        path: path(),
        source: sqlite(),
    };
    let cause = error.source().unwrap();
    assert!(cause.downcast_ref::<rusqlite::Error>().is_some());
    assert_eq!(
        error.to_string(),
        "`/home/u/.hermes/state.db` is not a readable SQLite database"
    );
    assert!(
        one_line(&error).ends_with("file is not a database"),
        "{}",
        one_line(&error)
    );
}

/// The `#[error(…)]` attributes of `harness/src`, each with the line of the variant after it.
fn error_attributes() -> Vec<(PathBuf, String, String)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            if !lines[i].trim_start().starts_with("#[error(") {
                i += 1;
                continue;
            }
            let mut attribute = String::new();
            while i < lines.len() {
                attribute.push_str(lines[i].trim());
                i += 1;
                if attribute.ends_with(")]") {
                    break;
                }
            }
            let variant = lines[i..]
                .iter()
                .find(|l| !l.trim_start().starts_with("///"))
                .map_or(String::new(), |l| l.trim().to_owned());
            found.push((file.clone(), attribute, variant));
        }
    }
    found
}

/// A source-level guard for every variant, including the ones [`errors_with_a_cause`] does not
/// build: no message interpolates a field named `source`, and no tuple variant whose field is
/// its source (`#[source]`, `#[from]`) interpolates that field.
#[test]
fn no_error_attribute_interpolates_its_source() {
    let attributes = error_attributes();
    assert!(
        attributes.len() > 100,
        "{} attributes found",
        attributes.len()
    );
    for (file, attribute, variant) in &attributes {
        let place = format!("{}: {attribute} {variant}", file.display());
        assert!(!attribute.contains("{source"), "{place}");
        if variant.contains("#[source]") || variant.contains("#[from]") {
            assert!(!attribute.contains("{0"), "{place}");
        }
    }
}

#[test]
fn a_step_error_has_the_causes_of_its_error() {
    let error = crate::runner::StepError::at(7)(runner_io());
    assert_cause_not_in_message(&error);
    assert_eq!(
        Chain(&error).to_string(),
        format!(
            "cannot read `/home/u/.hermes/state.db`\n  caused by: {}",
            io()
        )
    );
}
