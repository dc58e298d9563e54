//! The command line of the binary: its commands and flags (clap), and the dispatch to them.

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

use super::{
    self as cli, bisect_command, check_command, inspect_command, minimize_command, out,
    record_command, repro_command, run_command,
};

/// End-to-end harness and regression oracle for the Hermes Agent terminal client.
#[derive(Parser)]
#[command(
    name = "hermes-e2e",
    version,
    long_version = cli::LONG_VERSION,
    about,
    after_help = cli::EXIT_STATUS,
    after_long_help = cli::EXIT_STATUS_LONG
)]
struct Cli {
    /// Print nothing but the errors (and what `--json` asks for): for CI, where the exit status
    /// is the answer.
    #[arg(short, long, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run scenarios on the real client and print each verdict.
    #[command(after_help = run_command::EXIT_STATUS)]
    Run(run_command::RunArgs),
    /// Run one scenario and keep what it produced as a fixture: `state.db`, the `.cast`
    /// recordings, the provider log, `expect.toml` and a `PROVENANCE.md`. A new bug becomes a
    /// fixture in one command.
    #[command(after_help = record_command::EXIT_STATUS)]
    Record(record_command::RecordArgs),
    /// Reproduce a bug report: resume a saved `state.db` in the real client through every display
    /// path (`--resume ID`, `/resume ID`) and print the verdict of each. The file is never modified.
    #[command(after_help = repro_command::EXIT_STATUS)]
    Repro(repro_command::ReproArgs),
    /// Shrink a copy of a saved `state.db` to the fewest rows (and sessions) and the shortest
    /// texts that still misrender the same way in the real client, then print the minimized
    /// database's verdict; `minimized.db`, `REPORT.md` and a `record`-style fixture go into
    /// `--out`. Candidates are judged first offline (the client's own display read), confirmed by
    /// two runs of the real client every 10 kept steps and at the end. The file is never modified.
    #[command(after_help = minimize_command::EXIT_STATUS)]
    Minimize(minimize_command::MinimizeArgs),
    /// Show what a `state.db` holds and what a correct display of it is, without a client: the
    /// lineage, every row with its state, kind and generation, the carriers, the logical messages
    /// and the internal text. The file is never modified.
    #[command(after_help = inspect_command::EXIT_STATUS)]
    Inspect(inspect_command::InspectArgs),
    /// Run the oracle on a saved recording (asciicast v2 or v3) or a pasted screen (`--screen`)
    /// and a `state.db`, without a client,
    /// against the expected findings.
    #[command(after_help = check_command::EXIT_STATUS)]
    Check(check_command::CheckArgs),
    /// Find the first published client release that misrenders a scenario (or a saved
    /// `state.db`), or every release where what it shows changes (`--by signature`). Each
    /// release is installed into the cache on first use. Writes `REPORT.md`.
    #[command(after_help = bisect_command::EXIT_STATUS)]
    Bisect(bisect_command::BisectArgs),
    /// Print a shell completion script: `hermes-e2e completions bash >
    /// ~/.local/share/bash-completion/completions/hermes-e2e` (zsh: a `_hermes-e2e` file in
    /// `$fpath`; fish: `~/.config/fish/completions/hermes-e2e.fish`).
    #[command(after_help = cli::EXIT_STATUS_SHORT)]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff): `hermes-e2e man | man -l -`, or `hermes-e2e man >
    /// ~/.local/share/man/man1/hermes-e2e.1`.
    #[command(after_help = cli::EXIT_STATUS_SHORT)]
    Man,
}

/// The binary: parses the command line, installs the interrupt handler and runs the command;
/// its exit status is the table of `EXIT_STATUS`.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // What `--quiet` would silence is refused, as clap refuses flags that cannot combine (a
    // global flag's conflicts are not checked across the subcommand boundary).
    if let Command::Check(args) = &cli.command {
        let shown = [
            ("--history", args.history),
            ("--transcript", args.transcript),
        ];
        if let Some((flag, _)) = shown.into_iter().find(|&(_, on)| on && cli.quiet) {
            Cli::command()
                .error(
                    clap::error::ErrorKind::ArgumentConflict,
                    format!("the argument '--quiet' cannot be used with '{flag}': it prints what `--quiet` silences"),
                )
                .exit();
        }
    }
    out::set_quiet(cli.quiet);
    // An interrupted run stops its clients (their process groups) and says what it kept.
    let out_root = match &cli.command {
        Command::Run(args) => args.out.clone(),
        Command::Repro(args) => args.out.clone(),
        Command::Minimize(args) => args.out.clone(),
        _ => None,
    };
    cli::install_interrupt(&out_root.unwrap_or_else(crate::runner::default_out_root));
    cli::exit_code(match cli.command {
        Command::Run(args) => run_command::run(args),
        Command::Record(args) => record_command::record(args),
        Command::Repro(args) => repro_command::repro(args),
        Command::Minimize(args) => minimize_command::minimize(args),
        Command::Inspect(args) => inspect_command::inspect(&args),
        Command::Check(args) => check_command::check(&args),
        Command::Bisect(args) => bisect_command::bisect(args),
        Command::Completions { shell } => completions(shell),
        Command::Man => man(),
    })
}

/// `completions SHELL`: the completion script of every command and flag.
fn completions(shell: clap_complete::Shell) -> cli::Outcome {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "hermes-e2e", &mut script);
    out::document(&String::from_utf8_lossy(&script))?;
    Ok(cli::Exit::Ok)
}

/// `man`: the manual page of the binary and its commands, in roff.
fn man() -> cli::Outcome {
    let command = Cli::command();
    let mut page = Vec::new();
    clap_mangen::Man::new(command.clone())
        .render(&mut page)
        .map_err(cli::Error::Stdout)?;
    // Each command's own section: its usage, arguments and help.
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        // Leaked: clap names are `'static` without its `string` feature; `man` runs once.
        let name: &'static str = format!("hermes-e2e-{}", sub.get_name()).leak();
        let sub = sub.clone().name(name).bin_name(name);
        let mut section = Vec::new();
        let man = clap_mangen::Man::new(sub);
        man.render_name_section(&mut section)
            .and_then(|()| man.render_synopsis_section(&mut section))
            .and_then(|()| man.render_description_section(&mut section))
            .and_then(|()| man.render_options_section(&mut section))
            .map_err(cli::Error::Stdout)?;
        page.extend(section);
    }
    out::document(&String::from_utf8_lossy(&page))?;
    Ok(cli::Exit::Ok)
}
