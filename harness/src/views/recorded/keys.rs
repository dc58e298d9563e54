//! What a recording's input events say, key by key.
//!
//! What a recording's input events (`i`) say, key by key. An `i` event holds whatever the
//! terminal sent the program: what the user typed, and the terminal's own **replies** to the
//! program's queries — the client asks at start-up (device attributes `ESC [ c`, the background
//! colour `ESC ] 11 ; ?`, the cursor position `ESC [ 6 n`) and a recorder capturing input
//! (`asciinema rec --stdin`, `--capture-input`) writes the answers as input. A reply is not
//! typing: it starts no line and no view. What is a reply (`docs/views.md`, "Saved recordings"):
//!
//! - CSI reports: device attributes `ESC [ ? … c` / `ESC [ > … c`, a status or cursor position
//!   report `ESC [ … n` / `ESC [ ROW ; COL R`, a mode report `ESC [ ? … $ y`, the keyboard
//!   protocol's flags `ESC [ ? … u`, window reports `ESC [ … t`, `ESC [ … x`;
//! - focus in and out, `ESC [ I` and `ESC [ O`;
//! - strings: OSC (`ESC ] 10 ; rgb:…`, `ESC ] 11 ; rgb:…`, a title `ESC ] l …`), DCS
//!   (`ESC P > | xterm(390) ESC \`, XTVERSION; DECRQSS), APC and PM, ended by BEL or ST;
//! - a bracketed paste around no text (`ESC [ 200 ~ ESC [ 201 ~`).
//!
//! A cursor position report has the shape of a modified F3 key (`ESC [ 1 ; 2 R`, Shift-F3 on
//! xterm): it is read as a reply (the classic CLI binds no F3).

/// One key, or one reply, of the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Key {
    /// A character typed (or pasted).
    Char(char),
    /// Enter (`\r` or `\n`).
    Enter,
    /// Backspace (`DEL` or `BS`).
    Backspace,
    /// Ctrl-C.
    Interrupt,
    /// The start of a bracketed paste (`ESC [ 200 ~`).
    PasteStart,
    /// The end of a bracketed paste (`ESC [ 201 ~`).
    PasteEnd,
    /// A key whose effect the text does not show: an arrow (history recall), Tab
    /// (completion), Alt+key, Escape.
    Unspelled,
    /// The terminal's reply to a query: not typing.
    Reply,
    /// Another control character, which edits nothing the harness reads.
    Ignored,
}

/// The keys of `input` (all input events, in order, joined), each with the byte offset where
/// it starts. A sequence cut off by the end of the input is a lone Escape ([`Key::Unspelled`]).
pub(super) fn keys(input: &str) -> Vec<(Key, usize)> {
    let bytes = input.as_bytes();
    let mut out = Vec::new();
    let mut chars = input.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let key = match c {
            '\u{1b}' => match chars.peek().map(|&(_, n)| n) {
                Some('[') => {
                    chars.next();
                    // Parameters 0x30–0x3F, intermediates 0x20–0x2F, a final byte 0x40–0x7E.
                    let mut params = String::new();
                    let mut intermediates = String::new();
                    let mut last = None;
                    // A character outside those ranges ends the sequence and is read as a key.
                    while let Some(&(_, p)) = chars.peek() {
                        match p {
                            '0'..='?' => params.push(p),
                            ' '..='/' => intermediates.push(p),
                            '@'..='~' => {
                                chars.next();
                                last = Some(p);
                                break;
                            }
                            _ => break,
                        }
                        chars.next();
                    }
                    csi(&params, &intermediates, last)
                }
                Some(']' | 'P' | '_' | '^') if string_end(&input[at + 2..]).is_some() => {
                    // A string, ended by BEL or ST (`ESC \\`) before any line break.
                    let end = at + 2 + string_end(&input[at + 2..]).unwrap_or(0);
                    while chars.next_if(|&(i, _)| i < end).is_some() {}
                    Key::Reply
                }
                Some('O') => {
                    // SS3: an arrow or F1–F4 in application mode.
                    chars.next();
                    chars.next();
                    Key::Unspelled
                }
                Some(_) => {
                    // Alt+key.
                    chars.next();
                    Key::Unspelled
                }
                None => Key::Unspelled,
            },
            '\r' | '\n' => Key::Enter,
            // Completion: what it inserts the recording does not spell out.
            '\t' => Key::Unspelled,
            '\u{7f}' | '\u{8}' => Key::Backspace,
            '\u{3}' => Key::Interrupt,
            c if c.is_control() => Key::Ignored,
            c => Key::Char(c),
        };
        debug_assert!(at < bytes.len());
        out.push((key, at));
    }
    out
}

/// Where the string starting `rest` (after `ESC ]`, `ESC P`, `ESC _` or `ESC ^`) ends: the
/// byte offset just past its BEL or ST, if one comes before any line break. A reply never holds
/// a line break, so without such an end the introducer is Alt+key (`ESC _` is Meta+`_`), not a
/// reply that would swallow what is typed after it.
fn string_end(rest: &str) -> Option<usize> {
    let mut it = rest.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        match c {
            '\u{7}' => return Some(i + 1),
            '\u{1b}' if it.peek().map(|&(_, n)| n) == Some('\\') => return Some(i + 2),
            '\r' | '\n' => return None,
            _ => {}
        }
    }
    None
}

/// What the CSI sequence with `params`, `intermediates` and final byte `last` is.
fn csi(params: &str, intermediates: &str, last: Option<char>) -> Key {
    let private = params.starts_with(['?', '>', '=']);
    match (last, params, intermediates) {
        (Some('~'), "200", "") => Key::PasteStart,
        (Some('~'), "201", "") => Key::PasteEnd,
        // Focus in and out.
        (Some('I' | 'O'), "", "") => Key::Reply,
        // Device attributes, status and cursor position reports, window reports.
        (Some('c' | 'n' | 't' | 'x'), _, _) => Key::Reply,
        (Some('R'), p, "") if p.contains(';') => Key::Reply,
        // A mode report (DECRPM), the keyboard protocol's flags.
        (Some('y'), _, "$") => Key::Reply,
        (Some('u'), _, "") if private => Key::Reply,
        _ => Key::Unspelled,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(input: &str) -> Vec<Key> {
        keys(input).into_iter().map(|(k, _)| k).collect()
    }

    #[test]
    fn terminal_replies_are_not_typing() {
        for reply in [
            "\x1b[?1;2c",
            "\x1b[?62;22c",
            "\x1b[>0;276;0c",
            "\x1b[12;1R",
            "\x1b[0n",
            "\x1b]11;rgb:0000/0000/0000\x1b\\",
            "\x1b]10;rgb:ffff/ffff/ffff\x07",
            "\x1b]lhermes\x1b\\",
            "\x1bP>|XTerm(390)\x1b\\",
            "\x1b[I",
            "\x1b[O",
            "\x1b[?2026;2$y",
            "\x1b[?0u",
            "\x1b[8;40;100t",
        ] {
            assert_eq!(kinds(reply), vec![Key::Reply], "{reply:?}");
        }
    }

    #[test]
    fn keys_are_read_around_replies() {
        assert_eq!(
            kinds("\x1b[?1;2c\x1b]11;rgb:1e1e/1e1e/1e1e\x07hi\x1b[A\x7f\r\x03"),
            vec![
                Key::Reply,
                Key::Reply,
                Key::Char('h'),
                Key::Char('i'),
                Key::Unspelled,
                Key::Backspace,
                Key::Enter,
                Key::Interrupt,
            ]
        );
        assert_eq!(
            kinds("\x1b[200~\x1b[201~\x1b"),
            vec![Key::PasteStart, Key::PasteEnd, Key::Unspelled]
        );
        // Alt+`_` (Meta+`_`, yank-last-arg) is not a string that swallows the line after it.
        assert_eq!(
            kinds("\x1b_ab\r"),
            vec![Key::Unspelled, Key::Char('a'), Key::Char('b'), Key::Enter]
        );
        // A character that cannot be in a CSI sequence ends it and is read.
        assert_eq!(kinds("\x1b[1\r"), vec![Key::Unspelled, Key::Enter]);
        assert_eq!(kinds("a\t"), vec![Key::Char('a'), Key::Unspelled]);
        // Offsets are bytes into the input.
        let offsets: Vec<usize> = keys("é\x1b[Ix").into_iter().map(|(_, at)| at).collect();
        assert_eq!(offsets, vec![0, 2, 5]);
    }
}
