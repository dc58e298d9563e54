//! A scenario the binary runs without the real client.

use std::path::{Path, PathBuf};

/// `DIR/quick.toml`: a scenario that launches the client and checks; run with the `/bin/false`
/// test double as the client (`HERMES_E2E_CLIENT`), it exits at once and the run stops before
/// its verdict.
pub fn exits_at_once(dir: &Path) -> PathBuf {
    let scenario = dir.join("quick.toml");
    std::fs::write(
        &scenario,
        "# A client that exits at once (harness test).\n\n[scenario]\nsize = { rows = 24, cols = 80 }\n\n\
         [[step]]\nlaunch = []\n\n[[step]]\ncheck = \"never\"\nexpect = {}\n",
    )
    .unwrap();
    scenario
}
