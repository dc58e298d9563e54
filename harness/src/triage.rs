//! Triage: the first bad client version, minimization, failure signatures.
//!
//! Triage beyond reproduction: which published client version broke a display, and what a
//! verdict's *signature* is (the shape of a failure, apart from its exact numbers).
//!
//! - [`versions`]: the published releases of the client line, oldest first (read from the package
//!   index, or given as a list or a range).
//! - [`signature`]: what kind of failure a verdict shows (finding kinds, causes, the kind of message
//!   repeated), so that two runs can be said to fail "the same way".
//! - [`probe`]: what each release is probed with (a scenario or a saved `state.db`).
//! - [`bisect`]: `git bisect run` over published versions (good / bad / skip), or a walk over all of
//!   them that names every version where the signature changes.
//! - [`minimize`]: `minimize`: the fewest rows (and sessions) and shortest texts of a
//!   database that still misrender the same way in the real client (delta debugging over sessions,
//!   exchanges, rows, then halving texts; candidates judged offline by the client's own display
//!   read, confirmed in the PTY), with a `record`-style fixture of the result.

pub(crate) mod bisect;
pub(crate) mod minimize;
pub(crate) mod probe;
pub mod signature;
pub(crate) mod versions;
