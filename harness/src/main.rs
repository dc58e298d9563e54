//! `hermes-e2e`: run resume/compress scenarios against the real Hermes client and print verdicts.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use hermes_e2e::runner::{self, RunOptions};
use hermes_e2e::scenario::{self, Scenario};
use hermes_e2e::report;

/// End-to-end harness and regression oracle for the Hermes Agent terminal client.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run scenarios (default: every bundled scenario) and exit non-zero if an expectation fails.
    Run {
        /// Scenario files or directories (searched for `*.toml`).
        paths: Vec<PathBuf>,
        /// One JSON object per scenario per line on stdout.
        #[arg(long)]
        json: bool,
        /// Client spec overriding the scenarios' (`hermes-agent==0.19.0`, a path to `hermes`).
        #[arg(long)]
        client: Option<String>,
        /// Where to keep artefacts (default: `target/hermes-e2e`).
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Run {
            paths,
            json,
            client,
            out,
        } => run(paths, json, client, out),
    }
}

fn scenarios_root() -> PathBuf {
    let here = PathBuf::from("scenarios");
    if here.is_dir() {
        here
    } else {
        runner::workspace_root().join("scenarios")
    }
}

fn run(paths: Vec<PathBuf>, json: bool, client: Option<String>, out: Option<PathBuf>) -> ExitCode {
    let root = scenarios_root();
    let paths = if paths.is_empty() { vec![root.clone()] } else { paths };
    let files = match scenario::discover(&paths) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut loaded = Vec::new();
    for f in &files {
        match Scenario::load(f, &root) {
            Ok(s) => loaded.push(s),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let options = RunOptions {
        client,
        out_root: out.unwrap_or_else(runner::default_out_root),
    };
    let mut failed = 0;
    for s in &loaded {
        if !json {
            eprintln!("running {} …", s.name);
        }
        let result = runner::run(s, &options);
        if !result.passed {
            failed += 1;
        }
        if json {
            println!("{}", report::json_line(&result));
        } else {
            print!("{}", report::text(&result));
        }
    }
    if !json {
        println!(
            "\n{} scenario(s): {} passed, {} failed",
            loaded.len(),
            loaded.len() - failed,
            failed
        );
    }
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
