//! The classic CLI's resume recap panel.
//!
//! The classic CLI's resume recap panel, as the real client draws it: `/resume ID` prints a
//! one-line notice, then the recap panel, closed by a line starting with `╰`. The history is
//! complete once that panel has closed below the echoed command.

/// Whether a panel (a line starting with `╰`) closes below the last line showing `echo`.
pub(crate) fn recap_closed_after(lines: &[String], echo: &str) -> bool {
    let Some(at) = lines.iter().rposition(|l| l.contains(echo)) else {
        return false;
    };
    lines[at + 1..]
        .iter()
        .any(|l| l.trim_start().starts_with('╰'))
}
