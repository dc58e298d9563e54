//! The `type` step: text typed into the composer without Enter.
//!
//! The `type` step: text typed into the composer without Enter, and editing keys after it
//! (`type = "unsent draft"`, `keys = ["ctrl-w"]`), so a scenario can leave text unsent while it
//! resizes, settles and checks.
//!
//! What the composer holds after each key is known when the scenario is read: [`Line`] models
//! the one-line editing of the classic CLI's composer (prompt_toolkit's Emacs bindings, which
//! the client keeps: `hermes_cli` adds none of these keys) — the text and the cursor, carried
//! from one `type` step to the next. The harness waits for the composer to hold exactly that
//! after the text and after every key, and the idle waits after the step accept a composer
//! holding exactly the draft (`driver::ready`). A step that sends a line (`say`, `command`,
//! `resume`) after a draft is an error: the line would be sent with the draft in front of it;
//! `quit` clears the draft first (Ctrl-E, Ctrl-U).

use serde::Deserialize;

/// An editing key a `type` step presses after its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum EditKey {
    /// Left arrow (`ESC [ D`): the cursor one character left.
    #[serde(rename = "left")]
    Left,
    /// Right arrow (`ESC [ C`): the cursor one character right.
    #[serde(rename = "right")]
    Right,
    /// Ctrl-A: the cursor to the start of the line.
    #[serde(rename = "ctrl-a", alias = "home")]
    Home,
    /// Ctrl-E: the cursor to the end of the line.
    #[serde(rename = "ctrl-e", alias = "end")]
    End,
    /// Backspace (DEL, `\x7f`): deletes the character before the cursor.
    #[serde(rename = "backspace")]
    Backspace,
    /// Ctrl-U (`unix-line-discard`): deletes from the cursor back to the start of the line.
    #[serde(rename = "ctrl-u")]
    CtrlU,
    /// Ctrl-K (`kill-line`): deletes from the cursor to the end of the line.
    #[serde(rename = "ctrl-k")]
    CtrlK,
    /// Ctrl-W (`unix-word-rubout`): deletes the whitespace-delimited word before the cursor
    /// (and the whitespace between it and the cursor).
    #[serde(rename = "ctrl-w")]
    CtrlW,
}

impl EditKey {
    /// The bytes the terminal sends for the key.
    pub(crate) fn bytes(self) -> &'static [u8] {
        match self {
            EditKey::Left => b"\x1b[D",
            EditKey::Right => b"\x1b[C",
            EditKey::Home => b"\x01",
            EditKey::End => b"\x05",
            EditKey::Backspace => b"\x7f",
            EditKey::CtrlU => b"\x15",
            EditKey::CtrlK => b"\x0b",
            EditKey::CtrlW => b"\x17",
        }
    }

    /// The key as a scenario names it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            EditKey::Left => "left",
            EditKey::Right => "right",
            EditKey::Home => "ctrl-a",
            EditKey::End => "ctrl-e",
            EditKey::Backspace => "backspace",
            EditKey::CtrlU => "ctrl-u",
            EditKey::CtrlK => "ctrl-k",
            EditKey::CtrlW => "ctrl-w",
        }
    }
}

/// The composer's one line as the harness models it: its text and the cursor (a character
/// index).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Line {
    chars: Vec<char>,
    cursor: usize,
}

impl Line {
    /// The text.
    pub(crate) fn text(&self) -> String {
        self.chars.iter().collect()
    }

    /// Types `text` at the cursor.
    pub(crate) fn insert(&mut self, text: &str) {
        for c in text.chars() {
            self.chars.insert(self.cursor, c);
            self.cursor += 1;
        }
    }

    /// Presses `key`.
    pub(crate) fn press(&mut self, key: EditKey) {
        let n = self.chars.len();
        match key {
            EditKey::Left => self.cursor = self.cursor.saturating_sub(1),
            EditKey::Right => self.cursor = (self.cursor + 1).min(n),
            EditKey::Home => self.cursor = 0,
            EditKey::End => self.cursor = n,
            EditKey::Backspace => {
                if self.cursor > 0 {
                    self.cursor -= 1;
                    self.chars.remove(self.cursor);
                }
            }
            EditKey::CtrlU => {
                self.chars.drain(..self.cursor);
                self.cursor = 0;
            }
            EditKey::CtrlK => {
                self.chars.truncate(self.cursor);
            }
            EditKey::CtrlW => {
                let mut start = self.cursor;
                while start > 0 && self.chars[start - 1].is_whitespace() {
                    start -= 1;
                }
                while start > 0 && !self.chars[start - 1].is_whitespace() {
                    start -= 1;
                }
                self.chars.drain(start..self.cursor);
                self.cursor = start;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str, keys: &[EditKey]) -> Line {
        let mut l = Line::default();
        l.insert(text);
        for &k in keys {
            l.press(k);
        }
        l
    }

    #[test]
    fn keys_edit_the_line_as_prompt_toolkit_does() {
        use EditKey::*;
        assert_eq!(line("unsent draft", &[CtrlW]).text(), "unsent ");
        assert_eq!(line("unsent draft  ", &[CtrlW]).text(), "unsent ");
        assert_eq!(line("abc", &[Backspace, Backspace]).text(), "a");
        assert_eq!(line("abc", &[Left, CtrlU]).text(), "c");
        assert_eq!(line("abc", &[Left, Left, CtrlK]).text(), "a");
        assert_eq!(line("abc", &[Home, Backspace, Right, CtrlK]).text(), "a");
        assert_eq!(line("abc", &[Home, End, CtrlU]).text(), "");
        let mut l = line("world", &[Home]);
        l.insert("hello ");
        assert_eq!(l.text(), "hello world");
    }
}
