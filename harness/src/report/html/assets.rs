//! The asciinema player, embedded for offline reports.
//!
//! The asciinema player (version 3.18.0 from the npm registry, see
//! `harness/assets/vendor/asciinema-player/VERSION.md`), embedded at build time and written into
//! every report directory, so a report opened from `file://` or a CI artefact plays its recordings
//! with no network access.

use std::path::Path;

/// The folder, under the report directory, holding the player.
pub(crate) const PLAYER_DIR: &str = "asciinema-player";

/// The player's standalone script (it defines `AsciinemaPlayer`).
pub(crate) const PLAYER_JS: &str = "asciinema-player.min.js";

/// The player's stylesheet.
pub(crate) const PLAYER_CSS: &str = "asciinema-player.css";

const FILES: [(&str, &str); 4] = [
    (
        PLAYER_JS,
        include_str!("../../../assets/vendor/asciinema-player/asciinema-player.min.js"),
    ),
    (
        PLAYER_CSS,
        include_str!("../../../assets/vendor/asciinema-player/asciinema-player.css"),
    ),
    (
        "LICENSE",
        include_str!("../../../assets/vendor/asciinema-player/LICENSE"),
    ),
    (
        "VERSION.md",
        include_str!("../../../assets/vendor/asciinema-player/VERSION.md"),
    ),
];

/// Writes the player into `dir/asciinema-player/`.
pub(crate) fn write_player(dir: &Path) -> std::io::Result<()> {
    let to = dir.join(PLAYER_DIR);
    std::fs::create_dir_all(&to)?;
    for (name, content) in FILES {
        std::fs::write(to.join(name), content)?;
    }
    Ok(())
}
