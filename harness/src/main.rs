//! `hermes-e2e`: run resume/compress scenarios against the real Hermes client and print verdicts.
//!
//! This file parses the command line and dispatches; each command is in [`hermes_e2e::cli`].

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use hermes_e2e::cli::{self, bisect, check, inspect, minimize, record, repro, run};

/// End-to-end harness and regression oracle for the Hermes Agent terminal client.
#[derive(Parser)]
#[command(version, about, after_help = cli::EXIT_STATUS)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run scenarios on the real client and print each verdict.
    #[command(after_help = run::EXIT_STATUS)]
    Run(run::RunArgs),
    /// Run one scenario and keep what it produced as a fixture: `state.db`, the `.cast`
    /// recordings, the provider log, `expect.toml` and a `PROVENANCE.md`. A new bug becomes a
    /// fixture in one command.
    #[command(after_help = record::EXIT_STATUS)]
    Record(record::RecordArgs),
    /// Reproduce a bug report: resume a saved `state.db` in the real client through every display
    /// path (`--resume ID`, `/resume ID`) and print the verdict of each. The file is never modified.
    #[command(after_help = repro::EXIT_STATUS)]
    Repro(repro::ReproArgs),
    /// Shrink a copy of a saved `state.db` to the fewest rows (and sessions) and the shortest
    /// texts that still misrender the same way in the real client, then print the minimized
    /// database's verdict; `minimized.db`, `REPORT.md` and a `record`-style fixture go into
    /// `--out`. Candidates are judged first offline (the client's own display read), confirmed by
    /// two runs of the real client every 10 kept steps and at the end. The file is never modified.
    #[command(after_help = minimize::EXIT_STATUS)]
    Minimize(minimize::MinimizeArgs),
    /// Show what a `state.db` holds and what a correct display of it is, without a client: the
    /// lineage, every row with its state, kind and generation, the carriers, the logical messages
    /// and the internal text. The file is never modified.
    #[command(after_help = inspect::EXIT_STATUS)]
    Inspect(inspect::InspectArgs),
    /// Run the oracle on a saved recording (asciicast v2 or v3) or a pasted screen (`--screen`)
    /// and a `state.db`, without a client,
    /// against the expected findings.
    #[command(after_help = check::EXIT_STATUS)]
    Check(check::CheckArgs),
    /// Find the first published client release that misrenders a scenario (or a saved
    /// `state.db`), or every release where what it shows changes (`--by signature`). Each
    /// release is installed into the cache on first use. Writes `REPORT.md`.
    #[command(after_help = bisect::EXIT_STATUS)]
    Bisect(bisect::BisectArgs),
}

/// mimalloc instead of the system allocator: see its entry in `Cargo.toml`.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // An interrupted run stops its clients (their process groups) and says what it kept.
    let out_root = match &cli.command {
        Command::Run(args) => args.out.clone(),
        Command::Repro(args) => args.out.clone(),
        Command::Minimize(args) => args.out.clone(),
        _ => None,
    };
    cli::install_interrupt(&out_root.unwrap_or_else(hermes_e2e::runner::default_out_root));
    cli::exit_code(match cli.command {
        Command::Run(args) => run::run(args),
        Command::Record(args) => record::record(args),
        Command::Repro(args) => repro::repro(args),
        Command::Minimize(args) => minimize::minimize(args),
        Command::Inspect(args) => inspect::inspect(&args),
        Command::Check(args) => check::check(&args),
        Command::Bisect(args) => bisect::bisect(args),
    })
}
