//! `repro`: a user's `state.db` resumed through every display path.
//!
//! `repro`: a user's `state.db` resumed in the real client through every display path, each
//! drawing judged against one reading of the file.

use std::path::Path;
use std::time::{Duration, Instant};

use super::error::Error;
use super::session::{slash_resume, start_client};
use super::{create_dir, slug, CheckResult, ScenarioResult};
use crate::client::Ui;
use crate::client::{self, Client};
use crate::display::Surface;
use crate::driver::Launch;
use crate::provider::Provider;
use crate::scenario::Expectation;
use crate::settings::{ClientVersion, DisplaySettings};
use crate::store::Store;
use crate::terminal::{Size, Transcript};
use crate::verdict::{self, Basis};

/// The display paths `repro` replays a saved conversation through.
pub const REPRO_PATHS: &[&str] = &["--resume", "/resume"];

/// Reproduces a bug report: copies the user's `state.db` (with `-wal`/`-shm`) into a private
/// `HERMES_HOME`, resumes `session` (default: the most recent with messages) in the real client through every
/// path of [`REPRO_PATHS`], and runs the oracle on what each drew. The expectation is projected
/// from the user's file itself (read from a private copy; the file is never written).
/// Every check expects all findings to be 0, so `passed` means "displayed correctly".
pub fn repro(
    db: &Path,
    session: Option<&str>,
    client_spec: &str,
    ui: Ui,
    size: Size,
    out_root: &Path,
    user_config: Option<&Path>,
) -> Result<ScenarioResult, Error> {
    let started = Instant::now();
    let store = Store::open(db)?;
    let basis = Basis::read(&store, session.into(), Surface::default()).map_err(|e| match e {
        verdict::Error::Store(e) => Error::Store(e),
        verdict::Error::NoSessionWithMessages { .. } => Error::NothingToResume { db: db.into() },
    })?;
    drop(store);
    let client = client::resolve(client_spec)?;
    // The user's display settings (`--config`): the client runs with them, and the expectation
    // follows them (which messages the recap leaves out). Without: the harness's wide settings.
    let version = ClientVersion::from_spec(client.label()).unwrap_or(ClientVersion::Iot0_22);
    let settings = match user_config {
        Some(path) => DisplaySettings::from_config_yaml(path, version)?,
        None => DisplaySettings::wide(),
    };
    let basis = if ui == Ui::Classic {
        basis.with_recap(&settings, version)
    } else {
        basis
    };
    let dir = out_root.join("repro").join(slug(&basis.session, "session"));
    match std::fs::remove_dir_all(&dir) {
        Err(source) if source.kind() != std::io::ErrorKind::NotFound => {
            return Err(Error::Remove { path: dir, source })
        }
        _ => {}
    }
    let provider = Provider::start(crate::provider::Script::default()).map_err(Error::Provider)?;
    let mut result = ScenarioResult::new(
        format!("repro {} --session {}", db.display(), basis.session),
        db.to_owned(),
        client.label().to_owned(),
        dir.clone(),
        format!(
            "cargo run -p hermes-e2e -- repro {} --session {} --client {client_spec} --ui {} --size {size}{}",
            db.display(),
            basis.session,
            ui.name(),
            user_config
                .map(|c| format!(" --config {}", c.display()))
                .unwrap_or_default()
        ),
    );
    // A pristine copy of the user's database beside the recordings: what the expectation was
    // projected from (the report's stored rows, a maintainer's `inspect`).
    create_dir(&dir)?;
    crate::store::copy_database(db, &dir.join("state.db"))?;
    let config = {
        let mut config = client::base_config(&provider.base_url());
        config["display"] = settings.to_config_json();
        config
    };
    for (n, path) in REPRO_PATHS.iter().enumerate() {
        let launch = prepare(db, &dir, n, &client, &config, &basis.session, size, ui)?;
        let t = Instant::now();
        let drawn = draw(launch, path, &basis.session);
        result.client_secs += t.elapsed().as_secs_f64();
        match drawn {
            Ok((transcript, svg)) => {
                let check = basis.check(path, &transcript, None);
                result.checks.push(CheckResult::new(
                    &basis,
                    (check, None),
                    Expectation::default(),
                    0,
                    transcript,
                    Some(svg),
                ));
            }
            Err(e) => {
                result.error = Some(format!("path `{path}`: {}", crate::chain::one_line(&e)));
                break;
            }
        }
    }
    result.wall_secs = started.elapsed().as_secs_f64();
    result.passed = result.error.is_none() && result.checks.iter().all(|c| c.mismatches.is_empty());
    Ok(result)
}

/// The `n`-th display path's own home — a pristine copy of the user's database and the config —
/// and the launch of the client on it (`--resume ID` on the command line for that path).
#[allow(clippy::too_many_arguments)]
fn prepare(
    db: &Path,
    dir: &Path,
    n: usize,
    client: &Client,
    config: &serde_json::Value,
    session: &str,
    size: Size,
    ui: Ui,
) -> Result<Launch, Error> {
    // Each path gets its own pristine copy: the client migrates and writes its database.
    let home = dir.join(format!("home-{}", n + 1));
    let user_home = dir.join("user-home");
    let work = dir.join("work");
    for d in [&home, &user_home, &work] {
        create_dir(d)?;
    }
    crate::store::copy_database(db, &home.join("state.db"))?;
    client::write_config(&home, config).map_err(|source| Error::Config {
        home: home.clone(),
        source,
    })?;
    let args = if REPRO_PATHS[n] == "--resume" {
        vec!["--resume".to_owned(), session.to_owned()]
    } else {
        Vec::new()
    };
    Ok(Launch {
        program: client.executable.clone(),
        args,
        env: client::environment(&home, &user_home),
        cwd: work,
        size,
        cast: dir.join(format!("path-{}.cast", n + 1)),
        ui,
        terminal: crate::terminal::Terminal::Vt100,
        release: crate::settings::ClientVersion::from_spec(client.label()),
    })
}

/// Starts the client and, for `/resume`, resumes `session` in it; what it drew, as a transcript
/// and a picture.
fn draw(launch: Launch, path: &str, session: &str) -> Result<(Transcript, String), Error> {
    let deadline = Duration::from_secs(60);
    let mut d = start_client(launch, crate::terminal::Behaviour::default(), &[], deadline)?;
    if path == "/resume" {
        slash_resume(&mut d, session, deadline)?;
    }
    let svg = d.screen().svg(&format!("repro {session} — {path}"));
    Ok((d.screen().transcript(), svg))
}
