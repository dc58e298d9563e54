//! `hermes-e2e`: run resume/compress scenarios against the real Hermes client and print verdicts.
//!
//! The command line and its dispatch are [`hermes_e2e::cli::main`].

use std::process::ExitCode;

/// mimalloc instead of the system allocator: see its entry in `Cargo.toml`.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    hermes_e2e::cli::main()
}
