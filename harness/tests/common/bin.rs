//! The harness's binary, as cargo built it for the integration tests.

/// Path of the `hermes-e2e` binary.
pub const BIN: &str = env!("CARGO_BIN_EXE_hermes-e2e");
