//! How the emulated terminal answers the client's queries and whether it brackets pastes.
//!
//! A scenario's `[terminal]` table sets it ([`crate::scenario`]); the default is a local terminal emulator that answers at once
//! and wraps a paste in the markers the client asked for.
//!
//! ```toml
//! [terminal]
//! answer_after_ms = 400      # answer queries (CPR `CSI 6 n`, DA `CSI c`, DSR, colours) 400 ms late
//! # answers = false          # … or never
//! # split_answers_ms = 600   # … or ESC at once and the rest 600 ms later (a slow link's pieces)
//! # bracketed_paste = false  # ignore DEC mode 2004: a paste arrives as typed keys
//! ```

use std::time::Duration;

/// The terminal's behaviour towards the client (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Behaviour {
    /// When the terminal answers the client's queries.
    pub(crate) answers: Answers,
    /// Whether a paste is wrapped in `ESC [200~` … `ESC [201~` when the client enabled bracketed
    /// paste (DEC private mode 2004), as terminals do. `false`: a terminal (or a multiplexer's
    /// paste buffer) that sends pasted text as typed keys whatever the client asked for.
    pub(crate) bracketed_paste: bool,
}

impl Default for Behaviour {
    fn default() -> Behaviour {
        Behaviour {
            answers: Answers::AtOnce,
            bracketed_paste: true,
        }
    }
}

/// When the terminal answers a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answers {
    /// As soon as the query is read (a local terminal).
    AtOnce,
    /// This long after the query was read (a slow link: ssh over a distant host, a tunnel).
    After(Duration),
    /// Never (a terminal that does not implement the queries).
    Never,
    /// Its first byte (ESC) at once and the rest this long after: an answer a slow link delivers
    /// in two pieces (ssh over a lossy network, a tunnel), so the client reads a lone ESC first.
    Split(Duration),
}

/// The bytes a paste of `text` sends: its line breaks as Enter (`\r`, as terminals send pasted
/// newlines), wrapped in the bracketed-paste markers when `bracketed`.
pub(crate) fn paste_bytes(text: &str, bracketed: bool) -> String {
    let body = text.replace("\r\n", "\r").replace('\n', "\r");
    if bracketed {
        format!("{PASTE_START}{body}{PASTE_END}")
    } else {
        body
    }
}

/// The marker a terminal sends before a bracketed paste.
pub(crate) const PASTE_START: &str = "\x1b[200~";
/// The marker a terminal sends after a bracketed paste.
pub(crate) const PASTE_END: &str = "\x1b[201~";

/// The pastes among the input events of a recording (asciicast `i` data, in order): an input
/// wrapped in the bracketed-paste markers, or holding a line break before its last character
/// (the harness types a line and its Enter as two inputs, so one input holding two lines was
/// pasted). Each is returned with its markers removed and `\r` as `\n`.
pub(crate) fn pastes_in(inputs: &[String]) -> Vec<String> {
    inputs
        .iter()
        .filter_map(|input| {
            let bracketed = input.contains(PASTE_START);
            let text = input
                .replace(PASTE_START, "")
                .replace(PASTE_END, "")
                .replace("\r\n", "\n")
                .replace('\r', "\n");
            let lines = text.trim_end_matches('\n').contains('\n');
            (bracketed || lines).then_some(text)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paste_is_wrapped_only_when_bracketed() {
        assert_eq!(paste_bytes("a\nb\n", false), "a\rb\r");
        assert_eq!(paste_bytes("a\nb", true), "\x1b[200~a\rb\x1b[201~");
    }

    #[test]
    fn pastes_are_found_among_typed_inputs() {
        let inputs: Vec<String> = ["hello", "\r", "a\rb\rc\r", "\x1b[200~x\ry\x1b[201~", "\x03"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(pastes_in(&inputs), vec!["a\nb\nc\n", "x\ny"]);
    }
}
