//! What a child process wrote.

/// `bytes` (a child's stdout or stderr) as text, invalid UTF-8 replaced.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
