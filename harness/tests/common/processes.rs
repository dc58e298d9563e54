//! The processes a run leaves behind.

use std::path::Path;

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
