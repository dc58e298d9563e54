//! The `minimize` command.
//!
//! `minimize`: a user's `state.db` shrunk to the fewest rows and shortest texts that still
//! misrender the same way in the real client.

use std::path::PathBuf;

use super::repro_command::ClientArgs;
use super::{out, Error, Exit, Outcome};
use crate::display::Surface;
use crate::report;
use crate::store::Store;
use crate::triage::minimize::{self, Matching, Offline, Options, RealClient, Reference};
use crate::verdict::Basis;

/// What `minimize --help` ends with.
pub(crate) const EXIT_STATUS: &str = super::exit_status!(
    "\n`minimize` exits 0 when the final run of `minimized.db` shows the original's signature, 1 when\n\
     it no longer does, 3 when the database does not misrender (nothing to minimize).\n"
);

/// The arguments of `minimize`.
#[derive(Debug, clap::Args)]
pub(crate) struct MinimizeArgs {
    /// The database and how the client runs on it (as `repro` runs it).
    #[command(flatten)]
    pub(crate) client: ClientArgs,
    /// Where `minimized.db`, `REPORT.md` and the fixture go (by default
    /// `target/hermes-e2e/minimize/<session>`).
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// What counts as the same failure.
    #[arg(long, value_enum, default_value_t = Matching::Same)]
    pub(crate) signature: Matching,
    /// Candidates judged at most; the best confirmed is kept.
    #[arg(long, value_name = "N", default_value_t = minimize::DEFAULT_MAX_TRIALS)]
    pub(crate) max_trials: usize,
    /// Stop after SECS seconds with the best confirmed database (then one more run of the
    /// client for its verdict).
    #[arg(long, value_name = "SECS")]
    pub(crate) timeout: Option<f64>,
    /// Write the `record`-style fixture here (e.g. `fixtures/NAME`) [default: `OUT/fixture`].
    #[arg(long, value_name = "DIR")]
    pub(crate) fixture: Option<PathBuf>,
    /// No offline tier: every candidate runs the real client twice.
    #[arg(long)]
    pub(crate) no_offline: bool,
}

/// `minimize`: the minimized database's verdict, as `repro` prints it, and where the report is.
pub(crate) fn minimize(args: MinimizeArgs) -> Outcome {
    let c = &args.client;
    // A file that is no `state.db` (or has nothing to resume) is refused before any client runs.
    Basis::read(
        &Store::open(&c.db)?,
        c.session.as_deref().into(),
        Surface::default(),
    )?;
    let timeout = match args.timeout {
        Some(t) if !(t.is_finite() && t > 0.0) => return Err(Error::Timeout(t)),
        t => t.map(std::time::Duration::from_secs_f64),
    };
    let options = Options {
        session: c.session.clone(),
        matching: args.signature,
        max_trials: args.max_trials,
        timeout,
        out: args.out.clone(),
        fixture: args.fixture.clone(),
    };
    let mut oracle = RealClient {
        client: c.client.clone(),
        ui: c.ui,
        size: c.size(),
        config: c.config.clone(),
    };
    let mut progress = |line: &str| out::note(line);
    let mut reference = if args.no_offline {
        None
    } else {
        match Reference::start(&c.client, c.ui, c.config.as_deref()) {
            Ok(r) => Some(r),
            Err(e) => {
                progress(&format!(
                    "minimize: the offline tier could not start: {:#}",
                    crate::chain::Chain(&e)
                ));
                None
            }
        }
    };
    let offline = reference.as_mut().map(|r| r as &mut dyn Offline);
    let o = match minimize::minimize(&c.db, &options, &mut oracle, offline, &mut progress) {
        Err(e @ minimize::Error::NothingToMinimize { .. }) => {
            out::note(&e.to_string());
            return Ok(Exit::NothingToMinimize);
        }
        o => o?,
    };
    if let Some(dir) = &c.report {
        super::write_report(dir, std::slice::from_ref(&o.result))?;
    }
    super::print_result(&o.result, c.json)?;
    if !c.json {
        let text = format!(
            "minimized: {} ({} client runs; {:.0} s){}; signature: {}\n\
             fixture: {}\nreport: {}\nreproduce: {}\n",
            o.summary(),
            o.runs,
            o.wall_secs,
            if o.timed_out {
                "; --timeout ran out: the best confirmed database"
            } else {
                ""
            },
            o.signature,
            o.fixture.display(),
            o.dir.join("REPORT.md").display(),
            o.command
        );
        out::print(&report::printable(&text))?;
    }
    Ok(Exit::held(
        options.matching.matches(&o.signature, &o.final_signature),
    ))
}
