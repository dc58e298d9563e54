//! [`Screen::svg`]: the visible screen as an SVG picture with its colours.

use std::fmt;

use super::Screen;

/// Background of the pictures ([`Screen::svg`]) where the client sets none.
const DEFAULT_BG: &str = "#111111";

/// Foreground where the client sets none.
const DEFAULT_FG: &str = "#dddddd";

/// How one cell is drawn in a picture.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CellStyle {
    fg: String,
    bg: String,
    bold: bool,
}

impl CellStyle {
    fn of(cell: &vt100::Cell) -> CellStyle {
        let (mut fg, mut bg) = (
            css_color(cell.fgcolor(), DEFAULT_FG),
            css_color(cell.bgcolor(), DEFAULT_BG),
        );
        if cell.inverse() {
            std::mem::swap(&mut fg, &mut bg);
        }
        CellStyle {
            fg,
            bg,
            bold: cell.bold(),
        }
    }
}

/// A terminal colour as CSS: the xterm palette for indexed colours.
fn css_color(color: vt100::Color, default: &str) -> String {
    const BASE: [&str; 16] = [
        "#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5",
        "#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff",
    ];
    match color {
        vt100::Color::Default => default.to_owned(),
        vt100::Color::Idx(i) if i < 16 => BASE[usize::from(i)].to_owned(),
        vt100::Color::Idx(i) if i < 232 => {
            let i = i - 16;
            let level = |v: u8| if v == 0 { 0 } else { 55 + 40 * v };
            format!(
                "#{:02x}{:02x}{:02x}",
                level(i / 36),
                level((i / 6) % 6),
                level(i % 6)
            )
        }
        vt100::Color::Idx(i) => {
            let v = 8 + 10 * (i - 232);
            format!("#{v:02x}{v:02x}{v:02x}")
        }
        vt100::Color::Rgb(r, g, b) => format!("#{r:02x}{g:02x}{b:02x}"),
    }
}

impl Screen {
    /// The visible screen as an SVG picture with its colours (foreground, background, bold,
    /// inverse): what the terminal showed at this moment, small enough to paste into an issue.
    /// `title` names it (escaped).
    pub fn svg(&self, title: &str) -> String {
        use fmt::Write as _;
        const CELL_W: f64 = 8.4;
        const CELL_H: usize = 17;
        let screen = self.parser.screen();
        let (rows, cols) = screen.size();
        let (rows, cols): (u16, u16) = (rows.into(), cols.into());
        let width = (f64::from(cols) * CELL_W).ceil() as usize + 16;
        let height = usize::from(rows) * CELL_H + 16;
        let esc = |t: &str| {
            t.replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
                .replace('"', "&quot;")
        };
        let mut o = String::new();
        let _ = writeln!(
            o,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
             viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"{t}\">\n<title>{t}</title>\n\
             <rect width=\"100%\" height=\"100%\" fill=\"{}\"/>\n\
             <g font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\" font-size=\"14\" \
             xml:space=\"preserve\">",
            DEFAULT_BG,
            t = esc(title)
        );
        for row in 0..rows {
            let y = 8 + usize::from(row) * CELL_H;
            // Runs of cells with one style: a background rectangle, then the text.
            let mut col = 0;
            while col < cols {
                let Some(cell) = screen.cell(row, col) else {
                    break;
                };
                let style = CellStyle::of(cell);
                let start = col;
                let mut text = String::new();
                while col < cols {
                    let Some(c) = screen.cell(row, col) else {
                        break;
                    };
                    if CellStyle::of(c) != style {
                        break;
                    }
                    if !c.is_wide_continuation() {
                        text.push_str(if c.has_contents() { c.contents() } else { " " });
                    }
                    col += 1;
                }
                let x = 8.0 + f64::from(start) * CELL_W;
                let w = f64::from(col - start) * CELL_W;
                if style.bg != DEFAULT_BG {
                    let _ = writeln!(
                        o,
                        "<rect x=\"{x:.1}\" y=\"{y}\" width=\"{w:.1}\" height=\"{CELL_H}\" fill=\"{}\"/>",
                        style.bg
                    );
                }
                if !text.trim().is_empty() {
                    let _ = writeln!(
                        o,
                        "<text x=\"{x:.1}\" y=\"{}\" fill=\"{}\"{}>{}</text>",
                        y + CELL_H - 4,
                        style.fg,
                        if style.bold {
                            " font-weight=\"bold\""
                        } else {
                            ""
                        },
                        esc(&text)
                    );
                }
            }
        }
        o.push_str("</g>\n</svg>\n");
        o
    }
}
