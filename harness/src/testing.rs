//! Internals the crate's own tests and benchmarks reach (not the contract).
//!
//! Internals the crate's own integration tests and benchmarks reach: not the contract, hidden
//! from the documentation, and free to change with the stages they mirror. Each module here
//! re-exports by name, from the internal module of the same name, what the tests and benchmarks
//! use. Built with the feature `test-support` only.

/// The real client: provisioning, configuration, UI profiles, the stored-row schemas.
pub mod client {
    pub use crate::client::{
        base_config, cache_dir, environment, python, resolve, terminal_identity, write_config,
    };

    /// The stored-row schemas.
    pub mod stored {
        pub use crate::client::stored::SCHEMA_0_22;
    }
}

/// The real client in a real PTY: the driver (the real-recorder tests drive a recorder with it),
/// and its output with cursor moves squashed.
pub mod driver {
    pub use crate::client::profile::squash;
    pub use crate::driver::{Driver, Launch};
}

/// Generated compaction histories in the real schemas.
pub mod history {
    pub use crate::history::{steps, Compaction, History, Step};
}

/// The oracle: the words it counts, its row counts (stale previews, prompt rows), and what a
/// `state.db` holds and what a correct display of it is (`inspect`).
pub mod oracle {
    pub use crate::{
        inspect::inspect, oracle::count_rows, oracle::is_stale_preview, words::count as count_words,
    };
}

/// The fake model: the server itself, and the kinds of call it serves.
pub mod provider {
    pub use crate::provider::{CallKind, Provider, Script, Turn};
}

/// The client's own display read, and its comparison with the display contract.
pub mod reference {
    pub use crate::reference::{compare, Class, Disagreement, Reader};
}

/// The signature of a verdict (`bisect`, `minimize`).
pub mod triage {
    pub use crate::triage::signature;
}

/// A saved recording cut into views (`check --cast`).
pub mod views {
    pub use crate::views::recorded;
}
