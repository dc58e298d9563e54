//! What a child process wrote.

use std::process::Output;

/// `o`'s standard output as text, invalid UTF-8 replaced.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `o`'s standard error as text, invalid UTF-8 replaced.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
