//! What the user's input became: `stray_text` (rule 15) and `input_split` (rule 16).
//!
//! Pure functions, no I/O.
//!
//! - `stray_text`: characters of the screen that spell a sequence the *terminal* sends to the
//!   application — a cursor position report (`20;1R`), a device-attributes answer (`?1;2c`), a
//!   bracketed-paste marker (`[200~`), an SGR mouse report (`<35;12;5M`), a colour answer
//!   (`]11;rgb:0000/0000/0000`) — drawn because the client read it as typed text, or because the
//!   terminal's line discipline echoed it while the client was not reading. Such text belongs to
//!   no message, no internal text and no chrome: a client never means to draw it. A run found in
//!   a stored message or internal text (a conversation about escape sequences) is not counted.
//! - `input_split`: one pasted input stored, or sent to the model, as several user messages.

use std::collections::HashSet;

use crate::display::{Expected, Role};

/// One run of stray text on the screen ([`crate::Findings::stray_text`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StrayText {
    /// The run as drawn (a leading `^[`, the caret form of ESC, included when drawn).
    pub(crate) text: String,
    /// What the terminal meant by it: `cursor_position`, `device_attributes`, `paste_marker`,
    /// `mouse`, `status`, `colour`.
    pub(crate) kind: &'static str,
    /// The history row where it is drawn (from 1, as reports number rows).
    pub(crate) row: usize,
}

/// One paste the client made several user messages of ([`crate::Findings::input_split`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SplitInput {
    /// The first line of the paste.
    pub(crate) first_line: String,
    /// The lines pasted (non-empty ones).
    pub(crate) lines: usize,
    /// How many user messages hold a part of it (stored, or sent to the model: the larger).
    pub(crate) messages: usize,
}

/// The stray text on `history` (every line of the rendered history, in order), leaving out runs
/// that a reply or an internal text of `expected` holds, or that the user typed (`typed`: what
/// the harness or the recording's input events sent). A user message holding a run the user
/// never typed does not excuse it: the client put the terminal's answer into the message. Each
/// run's characters count.
pub(crate) fn stray_text(
    history: &[String],
    expected: &Expected,
    typed: &[String],
) -> Vec<StrayText> {
    let texts: Vec<&str> = expected
        .messages
        .iter()
        .filter(|m| m.role != Role::User)
        .map(|m| m.text.as_str())
        .chain(expected.internal.iter().map(|t| t.text.as_str()))
        .chain(typed.iter().map(String::as_str))
        .collect();
    let mut quoted: HashSet<String> = HashSet::new();
    for text in &texts {
        for run in runs(text) {
            quoted.insert(run.core);
        }
    }
    let mut out = Vec::new();
    for (row, line) in history.iter().enumerate() {
        for run in runs(line) {
            if quoted.contains(&run.core) {
                continue;
            }
            out.push(StrayText {
                text: run.text,
                kind: run.kind,
                row: row + 1,
            });
        }
    }
    out
}

/// Whether `text` (whitespace aside) is nothing but stray runs: a composer holding only what
/// the terminal answered, which the client read as keys (an idle composer all the same).
pub(crate) fn only_stray(text: &str) -> bool {
    let bare: String = text.split_whitespace().collect();
    let found = runs(&bare);
    !found.is_empty()
        && found.iter().map(|r| r.text.chars().count()).sum::<usize>() == bare.chars().count()
}

/// `line` without the runs drawn with their ESC (`^[[38;1R`): what the terminal's line
/// discipline echoed of its answers while the client was not reading. Text the client drew that
/// such an echo landed in the middle of (a reply's last words) reads whole again.
pub(crate) fn without_echoes(line: &str) -> String {
    if !line.contains('^') && !line.contains('\u{241b}') {
        return line.to_owned();
    }
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < chars.len() {
        let drawn_esc = chars[i] == '\u{241b}' || chars[i..].starts_with(&['^', '[']);
        if let Some((len, _, _)) = drawn_esc.then(|| run_at(&chars[i..])).flatten() {
            i += len;
            continue;
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// Characters of `stray` runs: the finding's number.
pub(crate) fn stray_chars(stray: &[StrayText]) -> usize {
    stray.iter().map(|s| s.text.chars().count()).sum()
}

/// One run found on a line.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Run {
    /// As drawn, with a drawn ESC (`^[` or `␛`).
    text: String,
    /// Without the drawn ESC: what a quoting text is compared by.
    core: String,
    kind: &'static str,
}

/// The runs of `line`, left to right. A run starts at the line's start, after a character that
/// is not a letter or digit, right after another run (`20;1R21;1R` is two), or anywhere with a
/// drawn ESC (`text^[[201~`).
fn runs(line: &str) -> Vec<Run> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut after_run = false;
    while i < chars.len() {
        // A drawn ESC (`^[`, `␛`) is distinctive enough to start a run anywhere.
        let drawn_esc = chars[i] == '\u{241b}' || chars[i..].starts_with(&['^', '[']);
        let may_start = i == 0 || after_run || drawn_esc || !chars[i - 1].is_alphanumeric();
        if may_start {
            if let Some((len, esc, kind)) = run_at(&chars[i..]) {
                out.push(Run {
                    text: chars[i..i + len].iter().collect(),
                    core: chars[i + esc..i + len].iter().collect(),
                    kind,
                });
                i += len;
                after_run = true;
                continue;
            }
        }
        after_run = false;
        i += 1;
    }
    out
}

/// The run at the start of `c`: its length, the length of its drawn ESC, and its kind. The run
/// must end the line or be followed by a character that is not a letter or digit, or by another
/// run.
fn run_at(c: &[char]) -> Option<(usize, usize, &'static str)> {
    let esc = if c.starts_with(&['^', '[']) {
        2
    } else if c.first() == Some(&'\u{241b}') {
        1
    } else {
        0
    };
    let rest = &c[esc..];
    let (len, kind) = body(rest, esc > 0)?;
    let end = esc + len;
    let ends = match c.get(end) {
        None => true,
        // A colour answer, a paste marker and a run with its ESC drawn are distinctive to their
        // end: what follows may be typed or pasted text.
        Some(_) if esc > 0 || kind == "colour" || kind == "paste_marker" => true,
        // So is a device-attributes answer with its `[`: `[?1;2c`.
        Some(_) if kind == "device_attributes" && rest.first() == Some(&'[') => true,
        Some(ch) if !ch.is_alphanumeric() => true,
        Some(_) => run_at(&c[end..]).is_some(),
    };
    ends.then_some((end, esc, kind))
}

/// Digits at the start of `c`: how many (1 to 4), or `None`.
fn digits(c: &[char]) -> Option<usize> {
    let n = c.iter().take_while(|ch| ch.is_ascii_digit()).count();
    (1..=4).contains(&n).then_some(n)
}

/// A sequence body (after a drawn ESC, if any): its length and kind. `escaped`: an ESC was
/// drawn before it, so the shortest forms count too.
fn body(c: &[char], escaped: bool) -> Option<(usize, &'static str)> {
    let bracket = usize::from(c.first() == Some(&'['));
    let b = &c[bracket..];
    // Bracketed-paste markers: `[200~`, `[201~` (the `[` needed).
    if bracket == 1
        && (b.starts_with(&['2', '0', '0', '~']) || b.starts_with(&['2', '0', '1', '~']))
    {
        return Some((bracket + 4, "paste_marker"));
    }
    // SGR mouse report: `<B;X;YM` or `…m`.
    if b.first() == Some(&'<') {
        let mut at = 1;
        for k in 0..3 {
            at += digits(&b[at..])?;
            if k < 2 {
                (b.get(at) == Some(&';')).then_some(())?;
                at += 1;
            }
        }
        return matches!(b.get(at), Some('M' | 'm')).then_some((bracket + at + 1, "mouse"));
    }
    // Device attributes: `?1;2c`, `?62;22c` (a `?`, numbers with a `;` between, `c`).
    if b.first() == Some(&'?') {
        let mut at = 1;
        let mut numbers = 0;
        loop {
            at += digits(&b[at..])?;
            numbers += 1;
            if b.get(at) == Some(&';') {
                at += 1;
            } else {
                break;
            }
        }
        return (numbers >= 2 && b.get(at) == Some(&'c'))
            .then_some((bracket + at + 1, "device_attributes"));
    }
    // Status report `[0n` (the `[` and a drawn ESC needed: `0n` alone is too common).
    if bracket == 1 && escaped && b.starts_with(&['0', 'n']) {
        return Some((3, "status"));
    }
    // Colour answer: `]10;rgb:…` or `]11;rgb:…`, hex groups split by `/`, an optional `\`.
    if c.first() == Some(&']') {
        let head: String = c.iter().take(8).collect();
        if head == "]10;rgb:" || head == "]11;rgb:" {
            let mut at = 8;
            while c
                .get(at)
                .is_some_and(|ch| ch.is_ascii_hexdigit() || *ch == '/')
            {
                at += 1;
            }
            if c.get(at) == Some(&'\\') {
                at += 1;
            }
            return (at > 8).then_some((at, "colour"));
        }
        return None;
    }
    // Cursor position report: `ROW;COLR`.
    let mut at = digits(b)?;
    (b.get(at) == Some(&';')).then_some(())?;
    at += 1;
    at += digits(&b[at..])?;
    (b.get(at) == Some(&'R')).then_some((bracket + at + 1, "cursor_position"))
}

/// The pastes `pasted` (as the scenario or the recording has them) that the client made several
/// user messages of: for each paste of two lines or more, the messages that hold a proper part
/// of it — a run of its consecutive lines, not all of them — counted among the user messages of
/// `expected` (stored) and among `said_user` (sent to the model), the larger; a paste made into
/// k ≥ 2 such messages is split k − 1 times.
pub(crate) fn split_inputs(
    pasted: &[String],
    expected: &Expected,
    said_user: Option<&[String]>,
) -> Vec<SplitInput> {
    let stored: Vec<&str> = expected
        .messages
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.text.as_str())
        .collect();
    let said: Vec<&str> = said_user
        .unwrap_or_default()
        .iter()
        .map(String::as_str)
        .collect();
    let mut out = Vec::new();
    for paste in pasted {
        let lines = lines_of(paste);
        if lines.len() < 2 {
            continue;
        }
        let pieces = |messages: &[&str]| {
            messages
                .iter()
                .filter(|m| is_proper_part(&lines_of(m), &lines))
                .count()
        };
        let messages = pieces(&stored).max(pieces(&said));
        if messages >= 2 {
            out.push(SplitInput {
                first_line: lines[0].clone(),
                lines: lines.len(),
                messages,
            });
        }
    }
    out
}

/// The finding's number: a paste made into k messages counts k − 1.
pub(crate) fn splits(split: &[SplitInput]) -> usize {
    split.iter().map(|s| s.messages.saturating_sub(1)).sum()
}

/// The non-empty lines of `text`, each trimmed.
fn lines_of(text: &str) -> Vec<String> {
    text.split(['\n', '\r'])
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Whether `part` is a run of consecutive lines of `whole`, and not all of them.
fn is_proper_part(part: &[String], whole: &[String]) -> bool {
    !part.is_empty() && part.len() < whole.len() && whole.windows(part.len()).any(|w| w == part)
}

#[cfg(test)]
#[path = "input/tests.rs"]
mod tests;
