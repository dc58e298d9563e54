//! Which emulator a scenario's checks read.
//!
//! [`Terminal`]: which emulator a scenario's checks read (`terminal = "vt100" | "reflow"`,
//! `--terminal`), and [`Emulator`], what the harness needs of either.

use super::{ReflowScreen, Screen, Transcript};

/// The emulator whose history a check reads.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize, Hash,
)]
#[serde(rename_all = "snake_case")]
pub enum Terminal {
    /// [`Screen`] (vt100): rows are truncated or padded on a width change, never re-wrapped.
    #[default]
    Vt100,
    /// [`ReflowScreen`] (alacritty_terminal): soft-wrapped rows re-wrap on a width change, as in
    /// tmux and every common terminal.
    Reflow,
}

impl Terminal {
    /// The name scenarios and the command line use.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Terminal::Vt100 => "vt100",
            Terminal::Reflow => "reflow",
        }
    }
}

/// What the harness needs of a terminal emulator: bytes in, resizes, the history out.
pub trait Emulator {
    /// A new, empty screen of `rows` × `cols` cells.
    fn create(rows: u16, cols: u16) -> Self;
    /// Feeds bytes as read from the PTY.
    fn feed(&mut self, bytes: &[u8]);
    /// Resizes the screen.
    fn resize(&mut self, rows: u16, cols: u16);
    /// The whole history, soft-wrapped rows joined, nothing stripped.
    fn history_lines(&self) -> Vec<String>;
    /// The history with chrome stripped.
    fn transcript(&self) -> Transcript;
    /// The visible rows, trailing blanks trimmed.
    fn viewport_rows(&self) -> Vec<String>;
    /// Answers to the queries seen so far, drained.
    fn take_replies(&mut self) -> Vec<u8>;
    /// Rows the client erased from the history (`CSI 3 J` in a frame).
    fn erased_rows(&self) -> usize;
}

macro_rules! emulator {
    ($ty:ty) => {
        impl Emulator for $ty {
            fn create(rows: u16, cols: u16) -> Self {
                <$ty>::new(rows, cols)
            }
            fn feed(&mut self, bytes: &[u8]) {
                <$ty>::feed(self, bytes)
            }
            fn resize(&mut self, rows: u16, cols: u16) {
                <$ty>::resize(self, rows, cols)
            }
            fn history_lines(&self) -> Vec<String> {
                <$ty>::history_lines(self)
            }
            fn transcript(&self) -> Transcript {
                <$ty>::transcript(self)
            }
            fn viewport_rows(&self) -> Vec<String> {
                <$ty>::viewport_rows(self)
            }
            fn take_replies(&mut self) -> Vec<u8> {
                <$ty>::take_replies(self)
            }
            fn erased_rows(&self) -> usize {
                <$ty>::erased_rows(self)
            }
        }
    };
}

emulator!(Screen);
emulator!(ReflowScreen);

/// One line saying that the client erased the terminal's scrollback (`None` when `rows` is 0): the
/// rows it erased are not in the history the checks read, as on a real terminal (see the module
/// docs of [`super`]).
pub fn erase_note(rows: usize) -> Option<String> {
    (rows > 0).then(|| {
        format!(
            "the client erased the terminal's scrollback (`CSI 3 J` in a frame, as the Ink TUI \
             does when it redraws after a resize): {rows} row(s) drawn before are not in the \
             history, as on tmux, xterm or VTE"
        )
    })
}

/// One line saying how two transcripts of the same bytes differ (`None` when they are equal):
/// how many lines each has that the other lacks, and the first line where they part.
pub fn difference(
    (left_name, left): (&str, &Transcript),
    (right_name, right): (&str, &Transcript),
) -> Option<String> {
    let a: Vec<&str> = left.lines.iter().map(|l| l.text.as_str()).collect();
    let b: Vec<&str> = right.lines.iter().map(|l| l.text.as_str()).collect();
    if a == b {
        return None;
    }
    let only = |x: &[&str], y: &[&str]| {
        let mut rest: Vec<&str> = y.to_vec();
        x.iter()
            .filter(|l| match rest.iter().position(|r| r == *l) {
                Some(i) => {
                    rest.swap_remove(i);
                    false
                }
                None => true,
            })
            .count()
    };
    let at = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    // Where in that line they part (characters), shown from a little before.
    let (x, y) = (a.get(at).copied(), b.get(at).copied());
    let col = match (x, y) {
        (Some(x), Some(y)) => x.chars().zip(y.chars()).take_while(|(p, q)| p == q).count(),
        _ => 0,
    };
    let from = col.saturating_sub(20);
    let shown = |line: Option<&str>| match line {
        Some(l) => {
            let rest: String = l.chars().skip(from).collect();
            let dots = if from > 0 { "…" } else { "" };
            format!("`{dots}{}`", excerpt(&rest))
        }
        None => "(end)".to_owned(),
    };
    Some(format!(
        "the {left_name} and {right_name} transcripts differ: {} line(s) only in {left_name}, \
         {} only in {right_name}; first at line {}, column {}: {left_name} {}, {right_name} {}",
        only(&a, &b),
        only(&b, &a),
        at + 1,
        col + 1,
        shown(x),
        shown(y),
    ))
}

/// At most 60 characters of `text`, with `…` when cut.
fn excerpt(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn difference_names_counts_and_where_the_lines_part() {
        let t = |lines: &[&str]| {
            Transcript::from_history_lines(&lines.iter().map(|l| l.to_string()).collect::<Vec<_>>())
        };
        let same = t(&["one", "two"]);
        assert_eq!(difference(("a", &same), ("b", &same)), None);
        let long = "x".repeat(70);
        let left = t(&["one", &format!("{long} cut")]);
        let right = t(&["one", &format!("{long} kept whole"), "three"]);
        assert_eq!(
            difference(("vt100", &left), ("reflow", &right)).unwrap(),
            "the vt100 and reflow transcripts differ: 1 line(s) only in vt100, 2 only in reflow; \
             first at line 2, column 72: vt100 `…xxxxxxxxxxxxxxxxxxx cut`, reflow \
             `…xxxxxxxxxxxxxxxxxxx kept whole`"
        );
    }
}
