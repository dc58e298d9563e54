//! The recordings and databases under `fixtures/`.

use std::path::PathBuf;

/// The path of `fixtures/NAME`.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures")
        .join(name)
}
