//! Chrome drawn more than once: `chrome_repeated` (display contract rule 14).
//!
//! Counted on a checkpoint's history as the row counts read it (soft-wrapped rows joined, nothing
//! stripped: [`crate::terminal::Emulator::history_lines`]), because the transcript the word-level
//! findings read has dropped the chrome. A frame draws its status bar once and a separator rule
//! between two things it separates: a second status bar row anywhere in the history, and a
//! separator rule with nothing but blank rows between it and the rule above, are chrome drawn
//! again. Prompt rows are not counted here: the row count `prompt_rows` counts them.

use crate::client::chrome::{is_separator_rule, is_status_bar_row};

/// Which piece of chrome a row drawn again is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ChromeKind {
    /// A status bar row ([`is_status_bar_row`]) after the first.
    StatusBar,
    /// A separator rule ([`is_separator_rule`]) right below another, blank rows between.
    Rule,
}

/// One row of chrome drawn again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub(crate) struct RepeatedChrome {
    /// Its index in the history (0 = the oldest row).
    pub(crate) row: usize,
    /// What it is.
    pub(crate) kind: ChromeKind,
}

/// Every row of `history` (joined rows, nothing stripped, oldest first) that draws chrome again
/// (see the module docs), in order: `chrome_repeated` is how many there are.
pub(crate) fn repeated_chrome(history: &[String]) -> Vec<RepeatedChrome> {
    let mut out = Vec::new();
    let mut status_bars = 0;
    // Whether the last row with anything on it was a separator rule.
    let mut rule_above = false;
    for (row, line) in history.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        if is_status_bar_row(line) {
            status_bars += 1;
            if status_bars > 1 {
                out.push(RepeatedChrome {
                    row,
                    kind: ChromeKind::StatusBar,
                });
            }
            rule_above = false;
            continue;
        }
        let rule = is_separator_rule(line);
        if rule && rule_above {
            out.push(RepeatedChrome {
                row,
                kind: ChromeKind::Rule,
            });
        }
        rule_above = rule;
    }
    out
}

#[cfg(test)]
mod tests;
