//! The "expected beside shown" view of one check: one table row per logical message of the display
//! model, in display order — on the left what a correct display shows, on the right the history
//! rows that render it on the screen — and one row per internal text.
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
//! - `order`: a message drawn out of order, `data-out-of-order="1"`.
//!
//! Unmarked, in neutral colours: `shown` (where this view locates a message the oracle found
//! nothing wrong with) and `also` (the same words once more where the oracle sees no rendering of
//! that message, e.g. a short question typed again).
//!
//! The page's summary is [`Counted`], the sum of the marks emitted, so the numbers shown are by
//! construction what is marked; the page's script counts the marks again in the browser
//! (`data-counted-*` on `<body>`), which the Chromium test compares with the check's findings.
//!
//! # Placement
//! Surplus, allowed and missing marks come from the oracle's [`Check`] exactly (rows and words).
//! The oracle does not report where the other messages, the internal texts or the out-of-order
//! messages are drawn, so this view locates them itself ([`locate`]: runs of
//! [`SHINGLE_WORDS`] words in common, or a whole shorter text), a placement for reading, not a
//! second oracle:
//! - internal words per internal text are the oracle's own count with that text left out
//!   (the drop in `internal_text_shown`); when those drops do not add up to the finding, one mark
//!   carries the finding instead, placed on the first internal text drawn;
//! - out-of-order messages are those outside a longest in-order sequence of the located first
//!   renderings (the oracle's rule on the located positions); when that does not give the
//!   oracle's number, one mark carries the finding, unplaced.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};

use crate::display::{Expected, LogicalMessage};
use crate::oracle::{self, Check, Repeat, SHINGLE_WORDS};
use crate::screen::Transcript;
use crate::words::word_spans;

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

/// Word positions a located rendering may skip (chrome between its words) and stay one rendering.
const GAP: usize = SHINGLE_WORDS;

/// Transcript positions followed per shingle (a text repeated hundreds of times lists the first).
const MAX_HITS: usize = 64;

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
}

/// A stretch of the transcript that draws a text: transcript line indexes (first, last), and
/// the first transcript word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub lines: (usize, usize),
    pub first_word: usize,
}

/// The view's HTML (a `<table class="side">` and a summary) and what its marks add up to.
pub(crate) struct Side {
    pub html: String,
    pub counted: Counted,
}

fn word_hash(w: &str) -> u64 {
    let mut h = DefaultHasher::new();
    w.hash(&mut h);
    h.finish()
}

fn gram_hash(words: &[u64]) -> u64 {
    words.iter().fold(0xcbf2_9ce4_8422_2325u64, |acc, &w| {
        (acc ^ w).wrapping_mul(0x0100_0000_01b3).rotate_left(7)
    })
}

/// Where each of `texts` is drawn in `transcript` (see the module docs): renderings in screen
/// order, each a run of shingles of the text found in order, or the whole text when it is
/// shorter than a shingle.
pub(crate) fn locate(transcript: &Transcript, texts: &[&str]) -> Vec<Vec<Span>> {
    let mut t_words: Vec<u64> = Vec::new();
    let mut t_line: Vec<usize> = Vec::new();
    for (k, line) in transcript.lines.iter().enumerate() {
        for (_, w) in word_spans(&line.text) {
            t_words.push(word_hash(&w));
            t_line.push(k);
        }
    }
    let mut grams: HashMap<u64, Vec<usize>> = HashMap::new();
    if t_words.len() >= SHINGLE_WORDS {
        for p in 0..=t_words.len() - SHINGLE_WORDS {
            grams
                .entry(gram_hash(&t_words[p..p + SHINGLE_WORDS]))
                .or_default()
                .push(p);
        }
    }
    let mut singles: HashMap<u64, Vec<usize>> = HashMap::new();
    for (p, &w) in t_words.iter().enumerate() {
        singles.entry(w).or_default().push(p);
    }
    texts
        .iter()
        .map(|text| {
            let w: Vec<u64> = word_spans(text)
                .into_iter()
                .map(|(_, w)| word_hash(&w))
                .collect();
            if w.is_empty() {
                return Vec::new();
            }
            // Hits: (transcript start, text start, length).
            let mut hits: Vec<(usize, usize, usize)> = Vec::new();
            if w.len() < SHINGLE_WORDS {
                for &p in singles.get(&w[0]).map(Vec::as_slice).unwrap_or_default() {
                    if t_words.get(p..p + w.len()) == Some(&w[..]) {
                        hits.push((p, 0, w.len()));
                    }
                }
            } else {
                for j in 0..=w.len() - SHINGLE_WORDS {
                    let key = gram_hash(&w[j..j + SHINGLE_WORDS]);
                    for &p in grams.get(&key).map(Vec::as_slice).unwrap_or_default() {
                        if hits.len() > MAX_HITS * w.len() {
                            break;
                        }
                        hits.push((p, j, SHINGLE_WORDS));
                    }
                }
            }
            hits.sort_unstable();
            hits.dedup_by_key(|h| h.0);
            // Runs: consecutive hits close on the screen, going forward in the text.
            let mut spans: Vec<Span> = Vec::new();
            let mut current: Option<(usize, usize, usize)> = None; // (first, end, last text pos)
            for (p, j, len) in hits {
                match current {
                    Some((first, end, last_j)) if p <= end + GAP && j > last_j => {
                        current = Some((first, end.max(p + len), j.max(last_j)));
                    }
                    _ => {
                        if let Some((first, end, _)) = current {
                            spans.push(Span {
                                lines: (t_line[first], t_line[end - 1]),
                                first_word: first,
                            });
                        }
                        current = Some((p, p + len, j));
                    }
                }
            }
            if let Some((first, end, _)) = current {
                spans.push(Span {
                    lines: (t_line[first], t_line[end - 1]),
                    first_word: first,
                });
            }
            spans
        })
        .collect()
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
    /// The text's words once more, where the oracle sees no rendering of this message (a short
    /// message typed again, quoted in a prompt).
    AlsoMatches {
        rows: (usize, usize),
    },
    Missing,
    Order,
    Internal {
        rows: Vec<(usize, usize)>,
        words: usize,
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

/// Indexes of `seq` outside one longest non-decreasing subsequence.
fn outside_longest_run(seq: &[usize]) -> Vec<usize> {
    // Patience sorting with back links.
    let mut tails: Vec<usize> = Vec::new(); // indexes into seq
    let mut back: Vec<Option<usize>> = vec![None; seq.len()];
    for (i, &x) in seq.iter().enumerate() {
        let at = tails.partition_point(|&t| seq[t] <= x);
        back[i] = at.checked_sub(1).map(|a| tails[a]);
        if at == tails.len() {
            tails.push(i);
        } else {
            tails[at] = i;
        }
    }
    let mut keep = vec![false; seq.len()];
    let mut at = tails.last().copied();
    while let Some(i) = at {
        keep[i] = true;
        at = back[i];
    }
    (0..seq.len()).filter(|&i| !keep[i]).collect()
}

/// Internal words per internal text (by the oracle, see the module docs), or `None` when the
/// drops do not add up to the finding.
fn internal_words(
    check: &Check,
    transcript: &Transcript,
    expected: &Expected,
) -> Option<Vec<usize>> {
    let total = check.findings.internal_text_shown;
    let base = oracle::check(&check.at, transcript, expected, None)
        .findings
        .internal_text_shown;
    if base != total {
        return None;
    }
    let mut out = vec![0; expected.internal.len()];
    let mut done = vec![false; expected.internal.len()];
    for x in 0..expected.internal.len() {
        if done[x] {
            continue;
        }
        // Identical internal texts count once: leave them all out together.
        let same: Vec<usize> = (0..expected.internal.len())
            .filter(|&y| expected.internal[y].text.trim() == expected.internal[x].text.trim())
            .collect();
        let mut without = expected.clone();
        without.internal = expected
            .internal
            .iter()
            .enumerate()
            .filter(|(y, _)| !same.contains(y))
            .map(|(_, t)| t.clone())
            .collect();
        let rest = oracle::check(&check.at, transcript, &without, None)
            .findings
            .internal_text_shown;
        out[x] = base.saturating_sub(rest);
        for y in same {
            done[y] = true;
        }
    }
    (out.iter().sum::<usize>() == total).then_some(out)
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
    };
    let expected = expected.unwrap_or(&empty);
    let n = expected.messages.len();
    let mut marks: Vec<Vec<Mark>> = vec![Vec::new(); n];
    let mut unplaced: Vec<(String, Mark)> = Vec::new();

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
        let m = (0..n).find(|&m| ids(&expected.messages[m]) == miss.rows && marks_free(&marks, m));
        match m {
            Some(m) => marks[m].push(Mark::Missing),
            None => unplaced.push((miss.excerpt.clone(), Mark::Missing)),
        }
    }

    // Where everything else is drawn, located here.
    let texts: Vec<&str> = expected
        .messages
        .iter()
        .map(|m| m.text.as_str())
        .chain(expected.internal.iter().map(|t| t.text.as_str()))
        .collect();
    let located = locate(transcript, &texts);
    let row_of = |line: usize| transcript.lines.get(line).map_or(0, |l| l.row);
    let rows_of = |s: &Span| (row_of(s.lines.0), row_of(s.lines.1));
    // Rows other texts hold: the oracle's renderings of repeated messages, and internal texts
    // drawn (a summary quoting the user's messages draws them once more, as internal text).
    let mut held: Vec<(usize, usize)> = check
        .repeats
        .iter()
        .flat_map(|r| r.screen_rows.iter().copied())
        .collect();
    if check.findings.internal_text_shown > 0 {
        held.extend(located[n..].iter().flatten().map(&rows_of));
    }
    for m in 0..n {
        let oracle_placed = marks[m].iter().any(|x| {
            matches!(
                x,
                Mark::Surplus { .. } | Mark::Allowed { .. } | Mark::Missing
            )
        });
        if oracle_placed {
            continue;
        }
        let mut first = true;
        for s in &located[m] {
            let rows = rows_of(s);
            if held.iter().any(|&(a, b)| a <= rows.0 && rows.1 <= b) {
                continue;
            }
            marks[m].push(if first {
                Mark::Shown { rows }
            } else {
                Mark::AlsoMatches { rows }
            });
            first = false;
        }
    }

    // Out of order: the oracle's rule on the located first renderings.
    if check.findings.out_of_order > 0 {
        let mut order: Vec<(usize, usize)> = Vec::new(); // (message, position)
        let mut previous = 0;
        for (m, spans) in located.iter().take(n).enumerate() {
            if spans.is_empty() || marks[m].iter().any(|x| matches!(x, Mark::Missing)) {
                continue;
            }
            let q = spans
                .iter()
                .map(|s| s.first_word)
                .find(|&q| q >= previous)
                .unwrap_or(spans[0].first_word);
            order.push((m, q));
            previous = q;
        }
        let positions: Vec<usize> = order.iter().map(|o| o.1).collect();
        let out = outside_longest_run(&positions);
        if out.len() == check.findings.out_of_order {
            for i in out {
                marks[order[i].0].push(Mark::Order);
            }
        } else {
            for _ in 0..check.findings.out_of_order {
                unplaced.push((
                    "a message drawn out of order (the page could not tell which)".into(),
                    Mark::Order,
                ));
            }
        }
    }

    // Internal text drawn.
    let mut internal_marks: Vec<Option<Mark>> = vec![None; expected.internal.len()];
    if check.findings.internal_text_shown > 0 {
        let spans_of =
            |x: usize| -> Vec<(usize, usize)> { located[n + x].iter().map(&rows_of).collect() };
        match internal_words(check, transcript, expected) {
            Some(words) => {
                for (x, &w) in words.iter().enumerate() {
                    if w > 0 {
                        internal_marks[x] = Some(Mark::Internal {
                            rows: spans_of(x),
                            words: w,
                        });
                    }
                }
            }
            None => {
                let mark = Mark::Internal {
                    rows: Vec::new(),
                    words: check.findings.internal_text_shown,
                };
                match (0..expected.internal.len()).find(|&x| !located[n + x].is_empty()) {
                    Some(x) => {
                        internal_marks[x] = Some(Mark::Internal {
                            rows: spans_of(x),
                            words: check.findings.internal_text_shown,
                        })
                    }
                    None => unplaced.push(("internal text (not located)".into(), mark)),
                }
            }
        }
    }

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
        let preview = if classes.is_empty() {
            QUIET_PREVIEW
        } else {
            TEXT_PREVIEW
        };
        left_cell(
            &mut o,
            &format!("{:?}", msg.role),
            &ids(msg),
            &msg.text,
            preview,
        );
        o.push_str("</td><td class=\"shown\">");
        right_cell(&mut o, &marks[m], transcript, &mut counted);
        o.push_str("</td></tr>\n");
    }
    for (x, t) in expected.internal.iter().enumerate() {
        let mark = internal_marks[x].take();
        let classes = if mark.is_some() { " has-internal" } else { "" };
        let _ = write!(
            o,
            "<tr id=\"internal-{}\" class=\"internal{classes}\"><td class=\"n\">i{}</td><td class=\"expected\">",
            x + 1,
            x + 1
        );
        let rows: Vec<i64> = t.rows.iter().map(|r| r.id).collect();
        let preview = if classes.is_empty() {
            QUIET_PREVIEW
        } else {
            TEXT_PREVIEW
        };
        left_cell(
            &mut o,
            "internal text (must not be shown)",
            &rows,
            &t.text,
            preview,
        );
        o.push_str("</td><td class=\"shown\">");
        match mark {
            Some(mark) => right_cell(&mut o, &[mark], transcript, &mut counted),
            None => o.push_str("<span class=\"quiet\">not shown (correct)</span>"),
        }
        o.push_str("</td></tr>\n");
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
         <td><span class=\"swatch order\"></span> OUT OF ORDER</td></tr></table>",
        f.words_rendered_more_than_once,
        counted.surplus_words,
        counted.surplus_marks,
        if counted.surplus_marks == 1 { "" } else { "s" },
        f.missing_messages,
        counted.missing,
        f.internal_text_shown,
        counted.internal_words,
        f.out_of_order,
        counted.out_of_order
    );
    let agrees = counted.surplus_words == f.words_rendered_more_than_once
        && counted.missing == f.missing_messages
        && counted.internal_words == f.internal_text_shown
        && counted.out_of_order == f.out_of_order;
    if !agrees {
        let _ = writeln!(
            head,
            "<p class=\"warning\">The marks below do not add up to the verdict ({}/{}/{}/{}): a \
             bug of the report.</p>",
            f.words_rendered_more_than_once,
            f.missing_messages,
            f.internal_text_shown,
            f.out_of_order
        );
    }
    if expected.messages.is_empty() && expected.internal.is_empty() {
        head.push_str(
            "<p class=\"warning\">The run's <code>state.db</code> could not be read: only the \
             findings are listed.</p>\n",
        );
    }
    Side {
        html: head + &o,
        counted,
    }
}

/// Whether message `m` has no missing mark yet (two identical missing messages go to two rows).
fn marks_free(marks: &[Vec<Mark>], m: usize) -> bool {
    !marks[m].iter().any(|x| matches!(x, Mark::Missing))
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

fn row_link((a, b): (usize, usize)) -> String {
    if a == b {
        format!("<a href=\"#line-{a}\">history row {a}</a>")
    } else {
        format!("<a href=\"#line-{a}\">history rows {a}–{b}</a>")
    }
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
            Mark::AlsoMatches { rows } => {
                let _ = write!(
                    o,
                    "<div class=\"mark also\"><span class=\"label\">the same words again (not a \
                     rendering of this message for the oracle)</span> {}{}</div>",
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
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::screen::TranscriptLine;

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

    #[test]
    fn locate_finds_each_rendering_of_a_text_in_screen_order() {
        let reply = "one two three four five six seven eight nine ten eleven twelve";
        let t = transcript(&[
            "banner",
            "one two three four five six",
            "seven eight nine ten eleven twelve",
            "you: hi there",
            "one two three four five six seven eight nine ten",
        ]);
        let spans = locate(&t, &[reply, "hi there", "absent words"]);
        assert_eq!(spans[0].len(), 2, "{:?}", spans[0]);
        assert_eq!(spans[0][0].lines, (1, 2));
        assert_eq!(spans[0][1].lines, (4, 4));
        assert_eq!(spans[1].len(), 1);
        assert_eq!(spans[1][0].lines, (3, 3));
        assert!(spans[2].is_empty());
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
        use crate::display::{InternalText, Role};
        let texts = [
            "alpha bravo charlie delta echo foxtrot golf hotel india juliet",
            "kilo lima mike november oscar papa quebec romeo sierra tango",
            "uniform victor whiskey xray yankee zulu one two three four",
            "five six seven eight nine ten eleven twelve thirteen fourteen",
        ];
        let summary = "summary of earlier turns fifteen sixteen seventeen eighteen nineteen";
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
        };
        // Message 2 drawn twice, message 3 missing, message 4 before message 1, the summary drawn.
        let t = transcript(&[
            texts[3], "chrome", texts[0], texts[1], "chrome", texts[1], summary,
        ]);
        let check = oracle::check("x", &t, &expected, None);
        let f = check.findings;
        assert!(f.words_rendered_more_than_once > 0 && f.missing_messages == 1);
        assert!(f.internal_text_shown > 0 && f.out_of_order == 1, "{f:?}");
        let side = side_by_side(&check, &t, Some(&expected));
        let c = side.counted;
        assert_eq!(c.surplus_words, f.words_rendered_more_than_once);
        assert_eq!(c.missing, f.missing_messages);
        assert_eq!(c.internal_words, f.internal_text_shown);
        assert_eq!(c.out_of_order, f.out_of_order);
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
    }

    #[test]
    fn out_of_order_is_what_lies_outside_a_longest_run() {
        assert_eq!(outside_longest_run(&[1, 2, 3]), Vec::<usize>::new());
        assert_eq!(outside_longest_run(&[1, 9, 2, 3]), vec![1]);
        assert_eq!(outside_longest_run(&[5, 1, 2]), vec![0]);
    }
}
