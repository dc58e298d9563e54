//! The expected-beside-shown view of one check.
//!
//! The "expected beside shown" view of one check: one table row per logical message of the display
//! model, in display order — on the left what a correct display shows, on the right the history
//! rows that render it on the screen — and one row per internal text and per message the user took
//! back.
//!
//! # Marks
//! Every finding of the check is a mark in this table, each with its own colour *and* a label in
//! words (the page reads without colour):
//! - `surplus`: a surplus rendering, one per [`Repeat`], on the message it draws, carrying
//!   `data-surplus-words` = the repeat's `words`;
//! - `allowed`: a rendering within the allowance (from [`Repeat::allowed_rows`]), not counted;
//! - `missing`: a message with no rendering (an empty right cell under the label, the stored text
//!   on the left), one per [`Missing`](crate::oracle::Missing), `data-missing="1"`;
//! - `internal`: internal text drawn, `data-internal-words` = its words counted by the oracle;
//! - `order`: a message drawn out of order, `data-out-of-order="1"`;
//! - `taken-back`: a message the user took back drawn (one per entry of [`Check::taken_back`]),
//!   `data-taken-back="1"`.
//!
//! Unmarked, in a neutral colour: `shown`, a rendering of a message the oracle found nothing
//! wrong with.
//!
//! The page's summary is [`Counted`], the sum of the marks emitted, so the numbers shown are by
//! construction what is marked; the page's script counts the marks again in the browser
//! (`data-counted-*` on `<body>`), which the Chromium test compares with the check's findings.
//!
//! # Placement
//! Every mark comes from the oracle's [`Check`]: surplus, allowed and missing marks from its
//! repeats and missing messages, the other renderings from [`Check::drawn`] (the alignment's own
//! renderings), out-of-order marks from [`Check::out_of_order_messages`] and internal words from
//! [`Check::internal_words`], taken-back marks from [`Check::taken_back`]. The view locates nothing itself, so it cannot place a rendering
//! where the oracle did not see one.

use std::fmt::Write as _;

use crate::display::{Expected, LogicalMessage};
use crate::oracle::{Check, Repeat};
use crate::terminal::Transcript;

use super::esc;

/// Characters of a message's text shown on the left (the rest behind "more").
const TEXT_PREVIEW: usize = 1200;

/// Characters shown on the left for a message with nothing marked (the page stays short enough
/// that the marked ones are found by scrolling, not searching).
const QUIET_PREVIEW: usize = 280;

/// Transcript lines shown per marked rendering on the right.
const SNIPPET_LINES: usize = 6;

/// Transcript lines shown per rendering with nothing marked.
const QUIET_LINES: usize = 2;

/// What the marks of one page add up to: the page's summary numbers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counted {
    /// Sum of `data-surplus-words` over the surplus marks.
    pub surplus_words: usize,
    /// Number of surplus marks.
    pub surplus_marks: usize,
    /// Number of allowed marks.
    pub allowed_marks: usize,
    /// Number of missing marks.
    pub missing: usize,
    /// Sum of `data-internal-words` over the internal marks.
    pub internal_words: usize,
    /// Number of out-of-order marks.
    pub out_of_order: usize,
    /// Number of taken-back marks.
    pub(crate) taken_back: usize,
}

/// The view's HTML (a `<table class="side">` and a summary) and what its marks add up to.
pub(crate) struct Side {
    pub(crate) html: String,
    pub(crate) counted: Counted,
}

/// One mark of the view, before it is written.
#[derive(Debug, Clone)]
enum Mark {
    Surplus {
        repeat: usize,
        rows: (usize, usize),
        words: usize,
    },
    Allowed {
        repeat: usize,
        rows: (usize, usize),
    },
    Shown {
        rows: (usize, usize),
    },
    Missing,
    Order,
    Internal {
        rows: Vec<(usize, usize)>,
        words: usize,
    },
    TakenBack {
        rows: Vec<(usize, usize)>,
    },
}

/// The message of `expected` a repeat draws: the one holding its rendered row, else the first
/// holding one of its rows.
fn message_of_repeat(expected: &Expected, r: &Repeat) -> Option<usize> {
    let holds = |m: &LogicalMessage, id: i64| m.rows.iter().any(|x| x.id == id);
    r.rendered_row
        .and_then(|id| expected.messages.iter().position(|m| holds(m, id)))
        .or_else(|| {
            expected
                .messages
                .iter()
                .position(|m| r.rows.iter().any(|&id| holds(m, id)))
        })
}

/// The view of `check` against `expected` (the display model of the checked session, when the
/// run's database could be read).
pub(crate) fn side_by_side(
    check: &Check,
    transcript: &Transcript,
    expected: Option<&Expected>,
) -> Side {
    let empty = Expected {
        session_id: String::new(),
        lineage: Vec::new(),
        stored_rows: 0,
        messages: Vec::new(),
        internal: Vec::new(),
        taken_back: Vec::new(),
    };
    let expected = expected.unwrap_or(&empty);
    let mut marks = Marks {
        on_message: vec![Vec::new(); expected.messages.len()],
        internal: vec![None; expected.internal.len()],
        taken_back: vec![None; expected.taken_back.len()],
        unplaced: Vec::new(),
    };
    marks.findings(check, expected);
    marks.renderings(check, expected);
    let (o, counted) = marks.table(expected, transcript);
    let head = summary(check, &counted, expected);
    Side {
        html: head + &o,
        counted,
    }
}

/// The marks of the view: on each logical message, on each internal text, and those the display
/// model has no row for.
struct Marks {
    on_message: Vec<Vec<Mark>>,
    internal: Vec<Option<Mark>>,
    taken_back: Vec<Option<Mark>>,
    unplaced: Vec<(String, Mark)>,
}

impl Marks {
    /// Surplus and allowed renderings, and missing messages: the oracle's findings.
    fn findings(&mut self, check: &Check, expected: &Expected) {
        let n = expected.messages.len();
        let Marks {
            on_message: marks,
            unplaced,
            ..
        } = self;
        // Surplus and allowed renderings, from the oracle.
        for (k, r) in check.repeats.iter().enumerate() {
            let surplus = Mark::Surplus {
                repeat: k,
                rows: r.surplus_rows,
                words: r.words,
            };
            match message_of_repeat(expected, r) {
                Some(m) => {
                    for &rows in &r.allowed_rows {
                        let known = marks[m]
                            .iter()
                            .any(|x| matches!(x, Mark::Allowed { rows: a, .. } if *a == rows));
                        if !known {
                            marks[m].push(Mark::Allowed { repeat: k, rows });
                        }
                    }
                    marks[m].push(surplus);
                }
                None => unplaced.push((r.excerpt.clone(), surplus)),
            }
        }
        // Missing messages, from the oracle.
        for miss in &check.missing {
            let m =
                (0..n).find(|&m| ids(&expected.messages[m]) == miss.rows && marks_free(marks, m));
            match m {
                Some(m) => marks[m].push(Mark::Missing),
                None => unplaced.push((miss.excerpt.clone(), Mark::Missing)),
            }
        }
    }

    /// Where everything else is drawn (the oracle's own renderings), out-of-order messages and
    /// internal text drawn.
    fn renderings(&mut self, check: &Check, expected: &Expected) {
        let n = expected.messages.len();
        let Marks {
            on_message: marks,
            internal: internal_marks,
            taken_back: taken_back_marks,
            unplaced,
        } = self;
        // Where everything else is drawn: the oracle's own renderings.
        let placed: Vec<bool> = marks
            .iter()
            .map(|ms| {
                ms.iter().any(|x| {
                    matches!(
                        x,
                        Mark::Surplus { .. } | Mark::Allowed { .. } | Mark::Missing
                    )
                })
            })
            .collect();
        for d in &check.drawn {
            if let Some(m) = d.message.filter(|&m| m < n && !placed[m]) {
                marks[m].push(Mark::Shown { rows: d.rows });
            }
        }
        // Out of order: the messages the oracle counted.
        for &m in &check.out_of_order_messages {
            if m < n {
                marks[m].push(Mark::Order);
            } else {
                unplaced.push(("a message drawn out of order".into(), Mark::Order));
            }
        }
        // Internal text drawn: the oracle's words per internal text, and where it drew each.
        for (x, &words) in check.internal_words.iter().enumerate() {
            if words == 0 {
                continue;
            }
            // Identical internal texts are counted at the first; their renderings are listed there.
            let same = |y: usize| {
                expected.internal.get(y).map(|t| t.text.trim())
                    == expected.internal.get(x).map(|t| t.text.trim())
            };
            let rows: Vec<(usize, usize)> = check
                .drawn
                .iter()
                .filter(|d| d.internal.is_some_and(same))
                .map(|d| d.rows)
                .collect();
            let mark = Mark::Internal { rows, words };
            match internal_marks.get_mut(x) {
                Some(slot) => *slot = Some(mark),
                None => unplaced.push(("internal text".into(), mark)),
            }
        }
        // Taken-back messages drawn: the oracle's, placed on the entry with the same rows.
        for t in &check.taken_back {
            let x = expected
                .taken_back
                .iter()
                .position(|e| e.rows.iter().map(|r| r.id).eq(t.rows.iter().copied()));
            let rows: Vec<(usize, usize)> = check
                .drawn
                .iter()
                .filter(|d| d.taken_back.is_some() && d.taken_back == x)
                .map(|d| d.rows)
                .collect();
            let mark = Mark::TakenBack { rows };
            match x.and_then(|x| taken_back_marks.get_mut(x)) {
                Some(slot) => *slot = Some(mark),
                None => unplaced.push((t.excerpt.clone(), mark)),
            }
        }
    }

    /// The table: a row per logical message, per internal text and per unplaced mark; and what
    /// its marks add up to.
    fn table(self, expected: &Expected, transcript: &Transcript) -> (String, Counted) {
        let Marks {
            on_message: marks,
            internal: mut internal_marks,
            taken_back: mut taken_back_marks,
            unplaced,
        } = self;
        // Write the table.
        let mut counted = Counted::default();
        let mut o = String::new();
        o.push_str(
            "<table class=\"side\">\n<thead><tr><th>#</th><th>a correct display shows</th>\
         <th>the screen shows (history rows)</th></tr></thead>\n<tbody>\n",
        );
        for (m, msg) in expected.messages.iter().enumerate() {
            let classes = row_classes(&marks[m]);
            let _ = write!(
            o,
            "<tr id=\"msg-{}\" class=\"msg{classes}\"><td class=\"n\">{}</td><td class=\"expected\">",
            m + 1,
            m + 1
        );
            left_cell(
                &mut o,
                &format!("{:?}", msg.role),
                &ids(msg),
                &msg.text,
                preview(classes.is_empty()),
            );
            o.push_str("</td><td class=\"shown\">");
            right_cell(&mut o, &marks[m], transcript, &mut counted);
            o.push_str("</td></tr>\n");
        }
        for (x, t) in expected.internal.iter().enumerate() {
            let row = NotToShow {
                class: "internal",
                id: format!("internal-{}", x + 1),
                n: format!("i{}", x + 1),
                what: "internal text (must not be shown)".into(),
                rows: t.rows.iter().map(|r| r.id).collect(),
                text: &t.text,
            };
            row.write(&mut o, internal_marks[x].take(), transcript, &mut counted);
        }
        for (x, t) in expected.taken_back.iter().enumerate() {
            let row = NotToShow {
                class: "taken-back",
                id: format!("taken-back-{}", x + 1),
                n: format!("t{}", x + 1),
                what: format!("{:?}, taken back by the user (must not be shown)", t.role),
                rows: t.rows.iter().map(|r| r.id).collect(),
                text: &t.text,
            };
            row.write(&mut o, taken_back_marks[x].take(), transcript, &mut counted);
        }
        for (what, mark) in unplaced {
            let classes = row_classes(std::slice::from_ref(&mark));
            let _ = write!(
                o,
                "<tr class=\"unplaced{classes}\"><td class=\"n\">?</td><td class=\"expected\">\
             <div class=\"meta\">not placed on a message of the display model</div>\
             <div class=\"excerpt\">{}</div></td><td class=\"shown\">",
                esc(&what)
            );
            right_cell(&mut o, &[mark], transcript, &mut counted);
            o.push_str("</td></tr>\n");
        }
        o.push_str("</tbody>\n</table>\n");

        (o, counted)
    }
}

/// A table row for a text a correct display must not show (an internal text, a message the user
/// took back): the text on the left; on the right where the screen draws it, or "not shown
/// (correct)".
struct NotToShow<'a> {
    /// The row's class; `has-CLASS` is added when the text is drawn.
    class: &'a str,
    id: String,
    /// The number cell (`i1`, `t1`).
    n: String,
    /// What the text is, above it.
    what: String,
    /// Its stored rows.
    rows: Vec<i64>,
    text: &'a str,
}

impl NotToShow<'_> {
    fn write(
        &self,
        o: &mut String,
        mark: Option<Mark>,
        transcript: &Transcript,
        counted: &mut Counted,
    ) {
        let class = self.class;
        let drawn = if mark.is_some() {
            format!(" has-{class}")
        } else {
            String::new()
        };
        let _ = write!(
            o,
            "<tr id=\"{}\" class=\"{class}{drawn}\"><td class=\"n\">{}</td><td class=\"expected\">",
            self.id, self.n
        );
        left_cell(
            o,
            &self.what,
            &self.rows,
            self.text,
            preview(drawn.is_empty()),
        );
        o.push_str("</td><td class=\"shown\">");
        match mark {
            Some(mark) => right_cell(o, &[mark], transcript, counted),
            None => o.push_str("<span class=\"quiet\">not shown (correct)</span>"),
        }
        o.push_str("</td></tr>\n");
    }
}

/// The view's summary: the verdict's numbers beside what the page's marks add up to, and a
/// warning when they differ or the display model could not be read.
fn summary(check: &Check, counted: &Counted, expected: &Expected) -> String {
    let f = &check.findings;
    let mut head = String::new();
    let _ = writeln!(
        head,
        "<table class=\"counted\" id=\"counted\"><tr><th></th><th>verdict</th><th>marked on \
         this page</th><th>marks</th></tr>\
         <tr><th>words rendered more than once</th><td>{}</td><td data-count=\"surplus-words\">{}</td>\
         <td><span class=\"swatch surplus\"></span> {} SURPLUS rendering{}</td></tr>\
         <tr><th>missing messages</th><td>{}</td><td data-count=\"missing\">{}</td>\
         <td><span class=\"swatch missing\"></span> MISSING</td></tr>\
         <tr><th>internal text shown (words)</th><td>{}</td><td data-count=\"internal-words\">{}</td>\
         <td><span class=\"swatch internal\"></span> INTERNAL TEXT SHOWN</td></tr>\
         <tr><th>out of order</th><td>{}</td><td data-count=\"out-of-order\">{}</td>\
         <td><span class=\"swatch order\"></span> OUT OF ORDER</td></tr>\
         <tr><th>taken back, shown</th><td>{}</td><td data-count=\"taken-back\">{}</td>\
         <td><span class=\"swatch taken-back\"></span> TAKEN BACK, SHOWN</td></tr>\
         <tr><th>chrome rows drawn again</th><td>{}</td><td>—</td>\
         <td>not marked: counted on the raw history (rule 14)</td></tr></table>",
        f.words_rendered_more_than_once,
        counted.surplus_words,
        counted.surplus_marks,
        if counted.surplus_marks == 1 { "" } else { "s" },
        f.missing_messages,
        counted.missing,
        f.internal_text_shown,
        counted.internal_words,
        f.out_of_order,
        counted.out_of_order,
        f.taken_back_shown,
        counted.taken_back,
        f.chrome_repeated
    );
    let agrees = counted.surplus_words == f.words_rendered_more_than_once
        && counted.missing == f.missing_messages
        && counted.internal_words == f.internal_text_shown
        && counted.out_of_order == f.out_of_order
        && counted.taken_back == f.taken_back_shown;
    if !agrees {
        let _ = writeln!(
            head,
            "<p class=\"warning\">The marks below do not add up to the verdict ({}/{}/{}/{}/{}): a \
             bug of the report.</p>",
            f.words_rendered_more_than_once,
            f.missing_messages,
            f.internal_text_shown,
            f.out_of_order,
            f.taken_back_shown
        );
    }
    if expected.messages.is_empty() && expected.internal.is_empty() {
        head.push_str(
            "<p class=\"warning\">The run's <code>state.db</code> could not be read: only the \
             findings are listed.</p>\n",
        );
    }
    head
}

/// Whether message `m` has no missing mark yet (two identical missing messages go to two rows).
fn marks_free(marks: &[Vec<Mark>], m: usize) -> bool {
    !marks[m].iter().any(|x| matches!(x, Mark::Missing))
}

/// Characters of the left cell shown before "more": fewer for a row with nothing marked.
fn preview(quiet: bool) -> usize {
    if quiet {
        QUIET_PREVIEW
    } else {
        TEXT_PREVIEW
    }
}

fn ids(m: &LogicalMessage) -> Vec<i64> {
    m.rows.iter().map(|r| r.id).collect()
}

fn row_classes(marks: &[Mark]) -> String {
    let mut c = String::new();
    for (cls, on) in [
        (
            " has-surplus",
            marks.iter().any(|m| matches!(m, Mark::Surplus { .. })),
        ),
        (
            " has-missing",
            marks.iter().any(|m| matches!(m, Mark::Missing)),
        ),
        (" has-order", marks.iter().any(|m| matches!(m, Mark::Order))),
        (
            " has-internal",
            marks.iter().any(|m| matches!(m, Mark::Internal { .. })),
        ),
        (
            " has-taken-back",
            marks.iter().any(|m| matches!(m, Mark::TakenBack { .. })),
        ),
    ] {
        if on {
            c.push_str(cls);
        }
    }
    c
}

fn left_cell(o: &mut String, role: &str, rows: &[i64], text: &str, preview: usize) {
    let links: Vec<String> = rows
        .iter()
        .map(|id| format!("<a href=\"#row-{id}\">{id}</a>"))
        .collect();
    let _ = write!(
        o,
        "<div class=\"meta\">{} · stored row{} {}</div>",
        esc(role),
        if rows.len() == 1 { "" } else { "s" },
        links.join(", ")
    );
    let chars = text.chars().count();
    if chars <= preview {
        let _ = write!(o, "<pre class=\"text\">{}</pre>", esc(text));
    } else {
        let head: String = text.chars().take(preview).collect();
        let _ = write!(
            o,
            "<pre class=\"text\">{}</pre><details><summary>{} more characters</summary>\
             <pre class=\"text\">{}</pre></details>",
            esc(&head),
            chars - preview,
            esc(&text.chars().skip(preview).collect::<String>())
        );
    }
}

/// The lines of `transcript` in history rows `rows`, at most `max` of them.
fn snippet(transcript: &Transcript, (a, b): (usize, usize), max: usize) -> String {
    let lines: Vec<&str> = transcript
        .lines
        .iter()
        .filter(|l| (a..=b).contains(&l.row) && !l.text.trim().is_empty())
        .map(|l| l.text.as_str())
        .collect();
    let mut s: String = lines
        .iter()
        .take(max)
        .map(|l| esc(l))
        .collect::<Vec<_>>()
        .join("\n");
    if lines.len() > max {
        let _ = write!(s, "\n… {} more lines", lines.len() - max);
    }
    format!("<pre class=\"snip\">{s}</pre>")
}

/// A link to history rows `(a, b)` (0-based), numbered from 1 as the history view's anchors are.
fn row_link(rows: (usize, usize)) -> String {
    format!(
        "<a href=\"#line-{}\">{}</a>",
        rows.0 + 1,
        crate::oracle::wording::history_rows(&rows)
    )
}

fn right_cell(o: &mut String, marks: &[Mark], transcript: &Transcript, counted: &mut Counted) {
    if marks.is_empty() {
        o.push_str("<span class=\"quiet\">not located on the screen (see the verdict)</span>");
    }
    for mark in marks {
        match mark {
            Mark::Surplus {
                repeat,
                rows,
                words,
            } => {
                counted.surplus_words += words;
                counted.surplus_marks += 1;
                let _ = write!(
                    o,
                    "<div class=\"mark surplus\" data-surplus-words=\"{words}\" data-repeat=\"{repeat}\">\
                     <span class=\"label\">SURPLUS rendering: {words} words counted</span> {} \
                     (<a href=\"#repeat-{repeat}\">repeat {}</a>){}</div>",
                    row_link(*rows),
                    repeat + 1,
                    snippet(transcript, *rows, SNIPPET_LINES)
                );
            }
            Mark::Allowed { repeat, rows } => {
                counted.allowed_marks += 1;
                let _ = write!(
                    o,
                    "<div class=\"mark allowed\" data-repeat=\"{repeat}\"><span class=\"label\">\
                     allowed rendering (not counted)</span> {}{}</div>",
                    row_link(*rows),
                    snippet(transcript, *rows, SNIPPET_LINES)
                );
            }
            Mark::Shown { rows } => {
                let _ = write!(
                    o,
                    "<div class=\"mark shown\"><span class=\"label\">shown</span> {}{}</div>",
                    row_link(*rows),
                    snippet(transcript, *rows, QUIET_LINES)
                );
            }
            Mark::Missing => {
                counted.missing += 1;
                o.push_str(
                    "<div class=\"mark missing\" data-missing=\"1\"><span class=\"label\">MISSING: \
                     not on the screen</span></div>",
                );
            }
            Mark::Order => {
                counted.out_of_order += 1;
                o.push_str(
                    "<div class=\"mark order\" data-out-of-order=\"1\"><span class=\"label\">OUT OF \
                     ORDER: drawn before a message it follows</span></div>",
                );
            }
            Mark::Internal { rows, words } => {
                counted.internal_words += words;
                let _ = write!(
                    o,
                    "<div class=\"mark internal\" data-internal-words=\"{words}\"><span class=\"label\">\
                     INTERNAL TEXT SHOWN: {words} words counted</span>"
                );
                drawn_at(o, rows, transcript);
            }
            Mark::TakenBack { rows } => {
                counted.taken_back += 1;
                o.push_str(
                    "<div class=\"mark taken-back\" data-taken-back=\"1\"><span class=\"label\">\
                     TAKEN BACK, SHOWN: the user took this message back</span>",
                );
                drawn_at(o, rows, transcript);
            }
        }
    }
}

/// Each of `rows` (history row ranges) linked and quoted, and the end of the mark.
fn drawn_at(o: &mut String, rows: &[(usize, usize)], transcript: &Transcript) {
    for r in rows {
        let _ = write!(
            o,
            " {}{}",
            row_link(*r),
            snippet(transcript, *r, SNIPPET_LINES)
        );
    }
    o.push_str("</div>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terminal::TranscriptLine;

    fn transcript(lines: &[&str]) -> Transcript {
        Transcript {
            lines: lines
                .iter()
                .enumerate()
                .map(|(row, t)| TranscriptLine {
                    row,
                    text: t.to_string(),
                })
                .collect(),
        }
    }

    fn message(id: i64, role: crate::display::Role, text: &str) -> LogicalMessage {
        LogicalMessage {
            role,
            text: text.to_string(),
            rows: vec![crate::display::RowRef {
                id,
                session_id: "s".into(),
                message_uid: None,
                carrier: false,
            }],
            shown: id,
        }
    }

    #[test]
    fn the_marks_add_up_to_the_findings_for_every_kind_of_finding() {
        use crate::display::{InternalText, Role, TakenBack};
        let texts = [
            "alpha bravo charlie delta echo foxtrot golf hotel india juliet",
            "kilo lima mike november oscar papa quebec romeo sierra tango",
            "uniform victor whiskey xray yankee zulu one two three four",
            "five six seven eight nine ten eleven twelve thirteen fourteen",
        ];
        let summary = "summary of earlier turns fifteen sixteen seventeen eighteen nineteen";
        let undone = "twenty twentyone twentytwo twentythree twentyfour twentyfive twentysix";
        let expected = Expected {
            session_id: "s".into(),
            lineage: vec!["s".into()],
            stored_rows: 5,
            messages: texts
                .iter()
                .enumerate()
                .map(|(k, t)| message(k as i64 + 1, Role::Assistant, t))
                .collect(),
            internal: vec![InternalText {
                rows: vec![],
                text: summary.into(),
            }],
            taken_back: vec![TakenBack {
                role: Role::User,
                text: undone.into(),
                rows: message(9, Role::User, undone).rows,
            }],
        };
        // Message 2 drawn twice, message 3 missing, message 4 before message 1, the summary drawn,
        // the taken-back message drawn.
        let t = transcript(&[
            texts[3], "chrome", texts[0], texts[1], "chrome", texts[1], summary, undone,
        ]);
        let check = crate::oracle::check("x", &t, &expected, None);
        let f = check.findings;
        assert!(f.words_rendered_more_than_once > 0 && f.missing_messages == 1);
        assert!(f.internal_text_shown > 0 && f.out_of_order == 1, "{f:?}");
        assert_eq!(f.taken_back_shown, 1);
        let side = side_by_side(&check, &t, Some(&expected));
        let c = side.counted;
        assert_eq!(c.surplus_words, f.words_rendered_more_than_once);
        assert_eq!(c.missing, f.missing_messages);
        assert_eq!(c.internal_words, f.internal_text_shown);
        assert_eq!(c.out_of_order, f.out_of_order);
        assert_eq!(c.taken_back, f.taken_back_shown);
        assert!(side
            .html
            .contains("TAKEN BACK, SHOWN: the user took this message back"));
        assert!(side.html.contains("MISSING: not on the screen"));
        assert!(side.html.contains("OUT OF ORDER"));
        assert!(side.html.contains("INTERNAL TEXT SHOWN"));
        assert!(!side.html.contains("do not add up"));
        // Without the database, the findings are still all marked.
        let bare = side_by_side(&check, &t, None).counted;
        assert_eq!(bare.surplus_words, f.words_rendered_more_than_once);
        assert_eq!(bare.missing, f.missing_messages);
        assert_eq!(bare.internal_words, f.internal_text_shown);
        assert_eq!(bare.out_of_order, f.out_of_order);
        assert_eq!(bare.taken_back, f.taken_back_shown);
    }
}
