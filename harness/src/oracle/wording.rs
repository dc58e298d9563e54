//! Every sentence the harness says about a check, in one place: the verdict sentence, the
//! diagnosis of a surplus rendering, and the names of each [`Cause`]. The oracle's stages only
//! count; the text report, `--json` and the HTML report take their words about causes from here.

use std::fmt;

use super::{Cause, Check, Missing, Repeat};

/// The one wording of each cause. Reports differ in how much they say, not in the words: the
/// verdict's diagnosis opens with [`Cause::problem`], the text report's `cause:` line with
/// [`Cause::meaning`] (its `Display`), the HTML report names it [`Cause::title`], and `--json`
/// with the serde name (`display`, `data`, `both`).
///
/// The two texts of [`Cause::Both`] differ in order: the diagnosis says "data and display
/// problem", the `cause:` line "display and data problem" (both pinned as they are).
impl Cause {
    /// What the verdict's diagnosis calls it: "display problem", "data problem", "data and
    /// display problem".
    pub const fn problem(self) -> &'static str {
        match self {
            Cause::Display => "display problem",
            Cause::Data => "data problem",
            Cause::Both => "data and display problem",
        }
    }

    /// What it means, as the text report's `cause:` line says it: "display problem (stored once,
    /// shown more than once)", "data problem (stored more than once, said once)", "display and
    /// data problem".
    pub const fn meaning(self) -> &'static str {
        match self {
            Cause::Display => "display problem (stored once, shown more than once)",
            Cause::Data => "data problem (stored more than once, said once)",
            Cause::Both => "display and data problem",
        }
    }

    /// Its name in the HTML report: "Display", "Data", "Both".
    pub const fn title(self) -> &'static str {
        match self {
            Cause::Display => "Display",
            Cause::Data => "Data",
            Cause::Both => "Both",
        }
    }
}

/// [`Cause::meaning`].
impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.meaning())
    }
}

/// One sentence for humans summarising `check`, e.g. "178 words rendered more than once (display
/// problem: row 16 (the carrier of row 10) rendered row 10's reply again; message_uid ef6c3d99…;
/// stored once)", or "no repeats, no missing messages" when every finding is zero.
pub fn verdict_sentence(check: &Check) -> String {
    let f = &check.findings;
    let mut parts = Vec::new();
    if f.words_rendered_more_than_once > 0 {
        let mut part = format!(
            "{} rendered more than once",
            plural(f.words_rendered_more_than_once, "word", "words")
        );
        // The largest surplus rendering speaks for the finding; the others are counted.
        if let Some(top) = check.repeats.iter().max_by_key(|r| r.words) {
            part.push_str(&format!(" ({}", diagnosis(top)));
            let more = check.repeats.len() - 1;
            if more > 0 {
                part.push_str(&format!(
                    "; {} more",
                    plural(more, "surplus rendering", "surplus renderings")
                ));
            }
            part.push(')');
        }
        parts.push(part);
    }
    if f.missing_messages > 0 {
        parts.push(messages_part(
            f.missing_messages,
            "missing",
            check.missing.first(),
        ));
    }
    if f.internal_text_shown > 0 {
        parts.push(format!(
            "{} of internal text shown",
            plural(f.internal_text_shown, "word", "words")
        ));
    }
    if f.taken_back_shown > 0 {
        parts.push(messages_part(
            f.taken_back_shown,
            "the user took back shown",
            check.taken_back.first(),
        ));
    }
    if f.out_of_order > 0 {
        parts.push(format!(
            "{} out of order",
            plural(f.out_of_order, "message", "messages")
        ));
    }
    let mut out = if parts.is_empty() {
        "no repeats, no missing messages".to_string()
    } else {
        parts.join("; ")
    };
    if let Some(first) = check.data_problems.first() {
        let more = check.data_problems.len() - 1;
        out.push_str(&format!(
            "; data problem in the database: {}{}",
            first.detail.trim_end_matches('.'),
            if more > 0 {
                format!(" ({more} more)")
            } else {
                String::new()
            }
        ));
    }
    out
}

/// "2 messages missing (User \"…\", rows 1 and 15)": a count of messages, what is said of them,
/// and the first of them.
fn messages_part(n: usize, said: &str, first: Option<&Missing>) -> String {
    let mut part = format!("{} {said}", plural(n, "message", "messages"));
    if let Some(first) = first {
        part.push_str(&format!(
            " ({:?} \"{}\", {})",
            first.role,
            first.excerpt,
            list_rows(&first.rows)
        ));
    }
    part
}

/// The cause clause of a surplus rendering: which rows, why it is a display or a data problem.
pub fn diagnosis(r: &Repeat) -> String {
    let rows = list_rows(&r.rows);
    let said = r.said.map(times_word).unwrap_or_default();
    match r.cause {
        Cause::Display => {
            let holder = match (r.rendered_row, r.carrier_of) {
                (Some(row), Some(original)) => {
                    let uid = r
                        .message_uids
                        .first()
                        .map(|u| format!(", message_uid {}", short_uid(u)))
                        .unwrap_or_default();
                    format!(
                        "row {row} (the carrier of row {original}{uid}) rendered row \
                         {original}'s reply again"
                    )
                }
                _ => match (r.rows.len(), r.message_uids.len()) {
                    (0 | 1, _) => format!("{rows} rendered {}×", r.times),
                    (_, 1) => {
                        format!("{rows} share message_uid {}", short_uid(&r.message_uids[0]))
                    }
                    _ => format!("{rows} rendered {}×", r.times),
                },
            };
            format!(
                "{}: {holder}; stored {}",
                r.cause.problem(),
                times_word(r.stored)
            )
        }
        Cause::Data if r.said.is_none() => format!(
            "{}: the database stores one utterance twice ({rows}); shown as stored",
            r.cause.problem()
        ),
        Cause::Data => format!(
            "{}: stored as {} logical messages ({rows}), said {said}",
            r.cause.problem(),
            r.stored
        ),
        Cause::Both if r.said.is_none() => format!(
            "{}: the database stores one utterance twice ({rows}), rendered {}×",
            r.cause.problem(),
            r.times
        ),
        Cause::Both => format!(
            "{}: stored as {} logical messages ({rows}), said {said}, rendered {}×",
            r.cause.problem(),
            r.stored,
            r.times
        ),
    }
}

/// The text report's `repeat:` line: "25 words \"…\" rendered 2× (surplus: history rows 40–44;
/// allowed: history rows 12–16)".
pub fn repeat_line(r: &Repeat) -> String {
    let range = |&(a, b): &(usize, usize)| format!("{a}–{b}");
    let allowed: Vec<String> = r.allowed_rows.iter().map(range).collect();
    format!(
        "{} words \"{}\" rendered {}× (surplus: history rows {}; allowed: {})",
        r.words,
        if r.excerpt.ends_with('…') {
            r.excerpt.clone()
        } else {
            format!("{} …", r.excerpt)
        },
        r.times,
        range(&r.surplus_rows),
        if allowed.is_empty() {
            "none".to_string()
        } else {
            format!("history rows {}", allowed.join(" and "))
        }
    )
}

/// The text report's `cause:` line: the cause's [`meaning`](Cause::meaning), then the rows,
/// sessions and message uids it is about.
pub fn cause_line(r: &Repeat) -> String {
    format!(
        "{}: rows {} in sessions {}; message_uid {}",
        r.cause,
        join(&r.rows),
        r.sessions.join(", "),
        if r.message_uids.is_empty() {
            "none (legacy database)".to_owned()
        } else {
            r.message_uids.join(", ")
        }
    )
}

/// The text report's `missing:` line: "User \"first words\" (rows 3, 4)".
pub fn missing_line(m: &Missing) -> String {
    format!("{:?} \"{}\" (rows {})", m.role, m.excerpt, join(&m.rows))
}

/// "10, 16, 22".
fn join(ids: &[i64]) -> String {
    ids.iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// "row 10", "rows 10 and 16", "rows 10, 16 and 22", "rows 10, 16, 22, 23, 24 and 3 more".
fn list_rows(rows: &[i64]) -> String {
    const SHOWN: usize = 5;
    let ids: Vec<String> = rows.iter().take(SHOWN).map(i64::to_string).collect();
    match (rows.len(), ids.split_last()) {
        (0, _) | (_, None) => "no stored row".to_string(),
        (1, _) => format!("row {}", ids[0]),
        (n, Some((last, init))) if n <= SHOWN => format!("rows {} and {last}", init.join(", ")),
        (n, _) => format!("rows {} and {} more", ids.join(", "), n - SHOWN),
    }
}

/// "once", "twice", "3 times".
fn times_word(n: usize) -> String {
    match n {
        1 => "once".to_string(),
        2 => "twice".to_string(),
        n => format!("{n} times"),
    }
}

/// "1 word", "178 words".
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The first 8 characters of a uid and an ellipsis, as people quote them.
fn short_uid(uid: &str) -> String {
    let mut chars = uid.chars();
    let head: String = chars.by_ref().take(8).collect();
    if chars.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

/// The row counts in one line, by their public names:
/// `stale_preview_rows 0, prompt_rows 1, max_blank_run 2, questions_not_once 0`.
pub fn rows_line(rows: &super::RowCounts) -> String {
    rows.named()
        .iter()
        .map(|(name, n)| format!("{name} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}
