//! Every sentence the harness says about a check.
//!
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
/// The two texts of [`Cause::Both`] differ in order: the verdict says "data and display
/// problem", the `cause:` line "display and data problem" (both pinned as they are).
impl Cause {
    /// What the verdict calls it, before the diagnosis: "display problem", "data problem",
    /// "data and display problem".
    pub(crate) const fn problem(self) -> &'static str {
        match self {
            Cause::Display => "display problem",
            Cause::Data => "data problem",
            Cause::Both => "data and display problem",
        }
    }

    /// What it means, as the text report's `cause:` line says it: "display problem (stored once,
    /// shown more than once)", "data problem (stored more than once, said once)", "display and
    /// data problem".
    pub(crate) const fn meaning(self) -> &'static str {
        match self {
            Cause::Display => "display problem (stored once, shown more than once)",
            Cause::Data => "data problem (stored more than once, said once)",
            Cause::Both => "display and data problem",
        }
    }

    /// Its name in the HTML report: "Display", "Data", "Both".
    pub(crate) const fn title(self) -> &'static str {
        match self {
            Cause::Display => "Display",
            Cause::Data => "Data",
            Cause::Both => "Both",
        }
    }
}

/// `Cause::meaning`.
impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.meaning())
    }
}

/// One sentence for humans summarising `check`, to be read aloud: each finding as a count and
/// what it is, joined by "; ", e.g. "169 words rendered more than once, a display problem: row
/// 10's reply is drawn twice, once from row 10 and again from its carrier, row 16 — stored once;
/// 502 words of internal text shown", or "no repeats, no missing messages" when every finding is
/// zero. Each finding opens with its count and name ("N words rendered more than once", "N
/// messages missing"), so verdicts stay greppable.
pub(crate) fn verdict_sentence(check: &Check) -> String {
    let f = &check.findings;
    let mut parts = Vec::new();
    if f.words_rendered_more_than_once > 0 {
        let mut part = format!(
            "{} rendered more than once",
            plural(f.words_rendered_more_than_once, "word", "words")
        );
        // The largest surplus rendering speaks for the finding; the others are counted.
        if let Some(top) = check.repeats.iter().max_by_key(|r| r.words) {
            let n = check.repeats.len();
            part.push_str(&if n > 1 {
                format!(" in {n} repeats, the largest")
            } else {
                ",".to_owned()
            });
            part.push_str(&format!(
                " {} {}: {}",
                article(top.cause.problem()),
                top.cause.problem(),
                diagnosis(top)
            ));
        }
        parts.push(part);
    }
    if f.missing_messages > 0 {
        parts.push(messages_part(f.missing_messages, "missing", &check.missing));
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
            &check.taken_back,
        ));
    }
    if f.code_words_altered > 0 {
        parts.push(code_part(f.code_words_altered, &check.altered_code));
    }
    if f.wrong_session > 0 {
        parts.push(match &check.opened {
            Some(o) => format!(
                "the wrong session: the screen names {} as the client's own, the check judges {} \
                 (rule 12: not in its lineage)",
                o.named, o.judged
            ),
            None => "the wrong session (rule 12)".to_owned(),
        });
    }
    if f.chrome_repeated > 0 {
        parts.push(format!(
            "{} drawn again (a display problem: a frame draws its status bar and each rule once)",
            plural(f.chrome_repeated, "chrome row", "chrome rows")
        ));
    }
    if f.stray_text > 0 {
        parts.push(stray_part(f.stray_text, &check.stray));
    }
    if f.input_split > 0 {
        parts.push(split_part(f.input_split, &check.split_inputs));
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
                format!(" (and {more} more)")
            } else {
                String::new()
            }
        ));
    }
    out
}

/// "4 code words drawn other than stored (a display problem: stored verbatim): `__init__`,
/// `__dict__` in Assistant "Subclass it …" (row 12)": the altered words of the first reply, in
/// backticks as stored.
fn code_part(n: usize, altered: &[crate::oracle::AlteredCode]) -> String {
    let mut part = format!(
        "{} drawn other than stored (a display problem: stored verbatim)",
        plural(n, "code word", "code words")
    );
    if let Some(first) = altered.first() {
        let words: Vec<String> = first
            .words
            .iter()
            .take(NAMED_MESSAGES)
            .map(|(w, _)| format!("`{w}`"))
            .collect();
        part.push_str(&format!(
            ": {}{} in Assistant \"{}\" ({})",
            words.join(", "),
            if first.words.len() > NAMED_MESSAGES {
                " …"
            } else {
                ""
            },
            first.excerpt,
            list_rows(&first.rows)
        ));
        if altered.len() > 1 {
            part.push_str(&format!(
                " and {} more",
                plural(altered.len() - 1, "reply", "replies")
            ));
        }
    }
    part
}

/// "10 characters of stray text (what the terminal sends the client, drawn): `20;1R`,
/// `21;1R` (cursor position reports) at row 41": the first runs, and where the first is drawn.
fn stray_part(n: usize, stray: &[crate::oracle::input::StrayText]) -> String {
    let mut part = format!(
        "{} of stray text (what the terminal sends the client, drawn)",
        plural(n, "character", "characters")
    );
    if let Some(first) = stray.first() {
        let runs: Vec<String> = stray
            .iter()
            .take(NAMED_MESSAGES)
            .map(|s| format!("`{}`", s.text))
            .collect();
        part.push_str(&format!(
            ": {}{} ({}) from row {}",
            runs.join(", "),
            if stray.len() > NAMED_MESSAGES {
                " …"
            } else {
                ""
            },
            first.kind.replace('_', " "),
            first.row
        ));
    }
    part
}

/// "2 extra messages made of one paste: \"Three questions…\" (4 lines) sent as 3 messages".
fn split_part(n: usize, split: &[crate::oracle::input::SplitInput]) -> String {
    let mut part = format!(
        "{} made of one paste",
        plural(n, "extra message", "extra messages")
    );
    if let Some(first) = split.first() {
        part.push_str(&format!(
            ": \"{}\" ({} lines) sent as {} messages",
            first.first_line, first.lines, first.messages
        ));
        if split.len() > 1 {
            part.push_str(&format!(
                " and {} more",
                plural(split.len() - 1, "paste", "pastes")
            ));
        }
    }
    part
}

/// How many messages a verdict names before it says "and N more" (`--json` holds them all).
const NAMED_MESSAGES: usize = 6;

/// "2 messages missing: User \"…\" (rows 1 and 15), Assistant \"…\" (row 2)": a count of
/// messages, what is said of them, and each of them ([`NAMED_MESSAGES`] at most, then "and N
/// more").
fn messages_part(n: usize, said: &str, messages: &[Missing]) -> String {
    let mut part = format!("{} {said}", plural(n, "message", "messages"));
    if messages.is_empty() {
        return part;
    }
    let shown = if messages.len() <= NAMED_MESSAGES {
        messages.len()
    } else {
        NAMED_MESSAGES - 1
    };
    let mut named: Vec<String> = messages[..shown].iter().map(missing_line).collect();
    if shown < messages.len() {
        named.push(format!("and {} more", messages.len() - shown));
    }
    part.push_str(": ");
    part.push_str(&named.join(", "));
    part
}

/// "a" or "an" before `word`.
fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

/// What a surplus rendering is, in words: which stored message is drawn how often, from which
/// rows, and how often it is stored (or said). The verdict and the HTML report put the cause's
/// [`problem`](Cause::problem) before it. E.g. "row 10's reply is drawn twice, once from row 10
/// and again from its carrier, row 16 — stored once"; "said once, stored as 2 messages (rows 10
/// and 16)".
pub(crate) fn diagnosis(r: &Repeat) -> String {
    let rows = list_rows(&r.rows);
    let drawn = times_word(r.times);
    match r.cause {
        Cause::Display => {
            let Some((&first, copies)) = r.rows.split_first() else {
                return format!("drawn {drawn} — stored {}", times_word(r.stored));
            };
            // The surplus rendering is attributed to a later copy of the message: name both.
            let from = match (r.rendered_row, r.carrier_of) {
                (Some(row), Some(original)) => Some((original, "reply", "carrier", row)),
                (Some(row), None) if row != first => Some((first, "message", "copy", row)),
                _ => None,
            };
            match from {
                Some((original, what, copy, row)) if r.times == 2 => format!(
                    "row {original}'s {what} is drawn twice, once from row {original} and again \
                     from its {copy}, row {row} — stored {}",
                    times_word(r.stored)
                ),
                Some((original, what, copy, row)) => format!(
                    "row {original}'s {what} is drawn {drawn}, again from its {copy}, row {row} \
                     — stored {}",
                    times_word(r.stored)
                ),
                None if copies.is_empty() => format!(
                    "row {first}'s message is drawn {drawn} — stored {}",
                    times_word(r.stored)
                ),
                None => format!(
                    "row {first}'s message is drawn {drawn} — stored {}, with {} in {}",
                    times_word(r.stored),
                    if copies.len() == 1 {
                        "a copy"
                    } else {
                        "copies"
                    },
                    list_rows(copies)
                ),
            }
        }
        Cause::Data if r.said.is_none() => {
            format!("the database stores one utterance twice ({rows}), drawn as stored")
        }
        Cause::Data => format!(
            "said {}, stored as {} messages ({rows})",
            r.said.map(times_word).unwrap_or_default(),
            r.stored
        ),
        Cause::Both if r.said.is_none() => {
            format!("the database stores one utterance twice ({rows}), drawn {drawn}")
        }
        Cause::Both => format!(
            "said {}, stored as {} messages ({rows}), drawn {drawn}",
            r.said.map(times_word).unwrap_or_default(),
            r.stored
        ),
    }
}

/// The text report's `repeat:` line: "25 words \"…\" rendered twice (surplus: history rows 40–44;
/// allowed: history rows 12–16)".
pub(crate) fn repeat_line(r: &Repeat) -> String {
    let allowed: Vec<String> = r.allowed_rows.iter().map(history_rows).collect();
    format!(
        "{} words \"{}\" rendered {} (surplus: {}; allowed: {})",
        r.words,
        if r.excerpt.ends_with('…') {
            r.excerpt.clone()
        } else {
            format!("{} …", r.excerpt)
        },
        times_word(r.times),
        history_rows(&r.surplus_rows),
        if allowed.is_empty() {
            "none".to_string()
        } else {
            allowed.join(" and ")
        }
    )
}

/// "history rows 40–44", "history row 40": the oracle's 0-based range `(first, last)` numbered
/// from 1, as every report (text, JSON, HTML, `check --history`) numbers history rows.
pub(crate) fn history_rows(&(first, last): &(usize, usize)) -> String {
    let (first, last) = (first + 1, last + 1);
    if first == last {
        format!("history row {first}")
    } else {
        format!("history rows {first}–{last}")
    }
}

/// The text report's `cause:` line: the cause's [`meaning`](Cause::meaning), then the rows,
/// sessions and message uids it is about (all of them): "display problem (…): rows 10 and 16 in
/// sessions A and B; message_uid ef6c3d99…".
pub(crate) fn cause_line(r: &Repeat) -> String {
    format!(
        "{}: {} in {}; {}",
        r.cause,
        counted("row", "rows", &r.rows),
        counted("session", "sessions", &r.sessions),
        if r.message_uids.is_empty() {
            "message_uid none (legacy database)".to_owned()
        } else {
            counted("message_uid", "message_uids", &r.message_uids)
        }
    )
}

/// The text report's `missing:` line: "User \"first words\" (rows 3 and 4)".
pub(crate) fn missing_line(m: &Missing) -> String {
    format!("{:?} \"{}\" ({})", m.role, m.excerpt, list_rows(&m.rows))
}

/// "row 10", "rows 10 and 16", "sessions a, b and c": every item, none left out.
fn counted<T: fmt::Display>(one: &str, many: &str, items: &[T]) -> String {
    let items: Vec<String> = items.iter().map(T::to_string).collect();
    match items.split_last() {
        None => format!("no {one}"),
        Some((only, [])) => format!("{one} {only}"),
        Some((last, init)) => format!("{many} {} and {last}", init.join(", ")),
    }
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
pub(crate) fn times_word(n: usize) -> String {
    match n {
        1 => "once".to_string(),
        2 => "twice".to_string(),
        n => format!("{n} times"),
    }
}

/// "1 word", "178 words": `n` and the noun that agrees with it.
pub(crate) fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The row counts in one line, by their public names:
/// `stale_preview_rows 0, prompt_rows 1, max_blank_run 2, questions_not_once 0`.
pub(crate) fn rows_line(rows: &super::RowCounts) -> String {
    rows.named()
        .iter()
        .map(|(name, n)| format!("{name} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::Role;

    /// A display repeat of the message in `rows`, its surplus rendering attributed to `rendered`.
    fn repeat(rows: &[i64], rendered: i64, carrier_of: Option<i64>) -> Repeat {
        Repeat {
            words: 169,
            times: 2,
            cause: Cause::Display,
            rows: rows.to_vec(),
            message_uids: vec!["6aada6356bcf419b".into()],
            sessions: vec!["a".into(), "b".into()],
            excerpt: "Automation arrived gradually …".into(),
            screen_rows: vec![(84, 95), (107, 118)],
            surplus_rows: (107, 118),
            allowed_rows: vec![(84, 95)],
            rendered_row: Some(rendered),
            carrier_of,
            stored: 1,
            said: None,
        }
    }

    fn missing(n: i64) -> Missing {
        Missing {
            role: Role::User,
            excerpt: format!("question {n}"),
            rows: vec![n],
        }
    }

    #[test]
    fn a_carrier_repeat_reads_as_one_sentence() {
        let mut c = Check::empty("x");
        c.findings.words_rendered_more_than_once = 169;
        c.findings.internal_text_shown = 1;
        c.repeats.push(repeat(&[10, 16], 16, Some(10)));
        assert_eq!(
            verdict_sentence(&c),
            "169 words rendered more than once, a display problem: row 10's reply is drawn \
             twice, once from row 10 and again from its carrier, row 16 — stored once; 1 word \
             of internal text shown"
        );
        assert_eq!(
            cause_line(&c.repeats[0]),
            "display problem (stored once, shown more than once): rows 10 and 16 in sessions a \
             and b; message_uid 6aada6356bcf419b"
        );
        assert_eq!(
            repeat_line(&c.repeats[0]),
            "169 words \"Automation arrived gradually …\" rendered twice (surplus: history rows \
             108–119; allowed: history rows 85–96)"
        );
    }

    #[test]
    fn several_repeats_name_the_largest_and_count_the_rest() {
        let mut c = Check::empty("x");
        c.findings.words_rendered_more_than_once = 180;
        let mut small = repeat(&[3], 3, None);
        small.words = 11;
        small.times = 3;
        c.repeats = vec![small, repeat(&[2, 14], 14, None)];
        assert_eq!(
            verdict_sentence(&c),
            "180 words rendered more than once in 2 repeats, the largest a display problem: \
             row 2's message is drawn twice, once from row 2 and again from its copy, row 14 — \
             stored once"
        );
        assert_eq!(
            diagnosis(&c.repeats[0]),
            "row 3's message is drawn 3 times — stored once"
        );
        assert_eq!(
            repeat_line(&c.repeats[0]),
            "11 words \"Automation arrived gradually …\" rendered 3 times (surplus: history rows \
             108–119; allowed: history rows 85–96)"
        );
    }

    #[test]
    fn every_missing_message_is_named_up_to_a_limit() {
        let mut c = Check::empty("x");
        c.findings.missing_messages = 2;
        c.missing = vec![missing(1), missing(5)];
        assert_eq!(
            verdict_sentence(&c),
            "2 messages missing: User \"question 1\" (row 1), User \"question 5\" (row 5)"
        );
        c.findings.missing_messages = 8;
        c.missing = (1..=8).map(missing).collect();
        let v = verdict_sentence(&c);
        assert!(
            v.starts_with("8 messages missing: User \"question 1\" (row 1), ")
                && v.ends_with(", User \"question 5\" (row 5), and 3 more"),
            "{v}"
        );
        c.missing[0].rows = vec![1, 13];
        assert_eq!(
            missing_line(&c.missing[0]),
            "User \"question 1\" (rows 1 and 13)"
        );
    }

    #[test]
    fn single_ranges_and_lists_agree_in_number() {
        // The oracle counts rows from 0, every report from 1.
        assert_eq!(history_rows(&(106, 106)), "history row 107");
        assert_eq!(history_rows(&(0, 2)), "history rows 1–3");
        assert_eq!(counted("row", "rows", &[16]), "row 16");
        assert_eq!(counted("row", "rows", &[1, 5, 9]), "rows 1, 5 and 9");
        assert_eq!(
            plural(1, "internal text", "internal texts"),
            "1 internal text"
        );
    }
}
