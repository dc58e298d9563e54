//! The deadline of one step, which every wait of the step shares.

use std::time::{Duration, Instant};

use super::error::Error;
use crate::driver::DriverError;

/// The deadline of one step: every wait of the step shares it.
pub(super) struct Deadline {
    start: Instant,
    whole: Duration,
}

impl Deadline {
    /// A deadline of `whole`, starting now.
    pub(super) fn new(whole: Duration) -> Deadline {
        Deadline {
            start: Instant::now(),
            whole,
        }
    }

    /// The whole deadline.
    pub(super) fn whole(&self) -> Duration {
        self.whole
    }

    /// What is left of it after the earlier waits.
    pub(super) fn left(&self) -> Duration {
        self.whole.saturating_sub(self.start.elapsed())
    }

    /// A driver error as the step reports it (see [`whole_step`]).
    pub(super) fn error(&self, e: DriverError) -> Error {
        whole_step(e, self.whole)
    }
}

/// A driver error as the step reports it: a timeout in any of the step's waits (which share the
/// step's deadline) is reported against the whole deadline, not the remainder that wait had left.
fn whole_step(e: DriverError, deadline: Duration) -> Error {
    Error::Driver(match e {
        DriverError::Timeout { what, screen, .. } => DriverError::Timeout {
            what,
            secs: deadline.as_secs_f64(),
            screen,
        },
        other => other,
    })
}
