//! `record`: one scenario run kept as a fixture.

use std::path::PathBuf;

use super::{out, Exit, Outcome};
use crate::report;
use crate::runner::{self, RunOptions};
use crate::scenario::Scenario;

/// What `record --help` ends with.
pub(crate) const EXIT_STATUS: &str = super::exit_status!(
    "\n`record` keeps the fixture whatever the verdict: a new bug is a failing run (exit 1).\n"
);

/// The arguments of `record`.
#[derive(Debug, clap::Args)]
pub(crate) struct RecordArgs {
    /// The scenario file.
    pub(crate) scenario: PathBuf,
    /// The fixture directory to create, e.g. `fixtures/NAME/`.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: PathBuf,
    /// Client spec overriding the scenario's.
    #[arg(long, value_name = "SPEC")]
    pub(crate) client: Option<String>,
}

/// `record`: the scenario's verdict, and where the fixture is.
pub(crate) fn record(args: RecordArgs) -> Outcome {
    let s = Scenario::load(&args.scenario, &super::scenarios_root())?;
    let progress = out::Progress::new(false, 100);
    let options = RunOptions {
        client: args.client,
        out_root: runner::default_out_root(),
        progress: progress.live().then(|| {
            std::sync::Arc::new(move |line: &str| progress.show(line)) as runner::Progress
        }),
        expect_correct: false,
        flags: Vec::new(),
    };
    let recorded = runner::record(&s, &options, &args.out);
    progress.clear();
    let result = recorded?;
    out::print(&report::printable(&report::text(&result)))?;
    out::println(&format!("recorded into {}", args.out.display()))?;
    Ok(Exit::of(std::slice::from_ref(&result)))
}
