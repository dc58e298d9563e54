//! The fallback picture of a checkpoint's screen, as text in an SVG.
//!
//! The fallback picture of the screen at a checkpoint, for checks that carry no picture of their
//! own (`CheckResult::screen_svg`, the terminal with its colours, is used when there is one): the
//! last screenful of the rendered history as monospace text in an SVG.

use std::fmt::Write as _;

use crate::terminal::Transcript;

use super::esc;

/// Pixels per character column (a monospace face at 14 px is about 0.6 em wide).
const CELL_W: f64 = 8.4;

/// Pixels per row.
const CELL_H: usize = 17;

/// The last `rows` rows of `transcript` (lines longer than `cols` wrapped as a terminal would),
/// drawn `cols` wide, with `title` as the SVG's title.
pub(crate) fn last_screen(
    transcript: &Transcript,
    rows: usize,
    cols: usize,
    title: &str,
) -> String {
    let (rows, cols) = (rows.max(1), cols.max(1));
    // Physical rows from the end of history: a transcript line starts at its row; empty rows
    // between lines (chrome the transcript dropped) stay empty.
    let last_row = transcript.lines.last().map_or(0, |l| l.row);
    let mut screen: Vec<String> = vec![String::new(); rows];
    let top = (last_row + 1).saturating_sub(rows);
    for line in transcript.lines.iter().filter(|l| l.row + rows > last_row) {
        let chars: Vec<char> = line.text.chars().collect();
        for (k, chunk) in chars.chunks(cols).enumerate() {
            let row = line.row + k;
            if row >= top && row - top < rows {
                screen[row - top] = chunk.iter().collect();
            }
        }
    }
    let width = (cols as f64 * CELL_W).ceil() as usize + 16;
    let height = rows * CELL_H + 16;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"{t}\">\n<title>{t}</title>\n\
         <rect width=\"100%\" height=\"100%\" fill=\"#111111\"/>\n\
         <g font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\" font-size=\"14\" \
         fill=\"#dddddd\" xml:space=\"preserve\">",
        t = esc(title)
    );
    for (k, text) in screen.iter().enumerate() {
        if text.trim().is_empty() {
            continue;
        }
        let _ = writeln!(
            o,
            "<text x=\"8\" y=\"{}\">{}</text>",
            8 + (k + 1) * CELL_H - 4,
            esc(text)
        );
    }
    o.push_str("</g>\n</svg>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terminal::TranscriptLine;

    #[test]
    fn the_picture_holds_the_last_rows_escaped() {
        let t = Transcript {
            lines: (0..50)
                .map(|row| TranscriptLine {
                    row,
                    text: format!("line {row} <b>&"),
                })
                .collect(),
        };
        let svg = last_screen(&t, 10, 80, "a <title>");
        assert!(svg.contains(">line 49 &lt;b&gt;&amp;</text>"));
        assert!(svg.contains(">line 40 "));
        assert!(!svg.contains(">line 39 "));
        assert!(svg.contains("<title>a &lt;title&gt;</title>"));
        assert_eq!(svg.matches("<text ").count(), 10);
    }
}
