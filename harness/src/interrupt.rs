//! What SIGINT and SIGTERM do to a harness that is driving clients.
//!
//! Each client runs in its own process group (the PTY's session, or `process_group(0)` for the
//! commands run without a terminal), so a Ctrl-C on the harness's terminal reaches the harness
//! only, and a killed harness would leave its clients running. Every live client group is
//! registered here ([`register`]); the binary [`install`]s a handler that kills every registered
//! group (SIGKILL), prints one line naming what was kept, and exits with `128 + signal` (130 for
//! SIGINT, 143 for SIGTERM). What was recorded stays where it was being written: recordings and
//! provider logs are written as they happen, in the run's private directory.
//!
//! The handler only does what is async-signal-safe: atomic loads, `killpg`, `write` and `_exit`.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::OnceLock;

use nix::sys::signal::{self, killpg, SaFlags, SigAction, SigHandler, SigSet, Signal};
use nix::unistd::Pid;

/// Client process groups alive at once; more are still killed on drop, just not on a signal.
const SLOTS: usize = 256;

#[allow(clippy::declare_interior_mutable_const)]
const FREE: AtomicI32 = AtomicI32::new(0);
static GROUPS: [AtomicI32; SLOTS] = [FREE; SLOTS];

/// The line printed on a signal (formatted once, before any signal can arrive).
static MESSAGE: OnceLock<Vec<u8>> = OnceLock::new();

/// A registered process group; unregistered when dropped.
#[derive(Debug)]
pub(crate) struct Registered(Option<usize>);

impl Drop for Registered {
    fn drop(&mut self) {
        if let Some(slot) = self.0 {
            GROUPS[slot].store(0, Ordering::SeqCst);
        }
    }
}

/// Registers the process group `pgid` (a client's) to be killed if the harness is interrupted.
pub(crate) fn register(pgid: i32) -> Registered {
    if pgid <= 0 {
        return Registered(None);
    }
    for (slot, group) in GROUPS.iter().enumerate() {
        if group
            .compare_exchange(0, pgid, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return Registered(Some(slot));
        }
    }
    Registered(None)
}

/// Installs the SIGINT / SIGTERM handler; `kept` names where interrupted runs leave what they
/// recorded.
pub(crate) fn install(kept: &std::path::Path) {
    let _ = MESSAGE.set(
        format!(
            "\nhermes-e2e: interrupted; every client was stopped; what the interrupted runs \
             recorded is kept under {}\n",
            kept.display()
        )
        .into_bytes(),
    );
    let action = SigAction::new(
        SigHandler::Handler(on_signal),
        SaFlags::empty(),
        SigSet::empty(),
    );
    for sig in [Signal::SIGINT, Signal::SIGTERM] {
        // SAFETY: the handler only calls async-signal-safe functions (see the module docs).
        unsafe {
            let _ = signal::sigaction(sig, &action);
        }
    }
}

extern "C" fn on_signal(sig: nix::libc::c_int) {
    for group in &GROUPS {
        let pgid = group.load(Ordering::SeqCst);
        if pgid > 0 {
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
        }
    }
    if let Some(message) = MESSAGE.get() {
        // SAFETY: `write` on a valid buffer is async-signal-safe; a short write is acceptable.
        unsafe {
            nix::libc::write(2, message.as_ptr().cast(), message.len());
        }
    }
    // SAFETY: `_exit` is async-signal-safe and does not run destructors or atexit handlers.
    unsafe { nix::libc::_exit(128 + sig) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_taken_and_given_back() {
        let a = register(4242);
        let b = register(4243);
        assert!(a.0.is_some() && b.0.is_some() && a.0 != b.0);
        let slot = a.0.unwrap();
        assert_eq!(GROUPS[slot].load(Ordering::SeqCst), 4242);
        drop(a);
        assert_eq!(GROUPS[slot].load(Ordering::SeqCst), 0);
        assert!(register(0).0.is_none());
    }
}
