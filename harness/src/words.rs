//! Word segmentation shared by the oracle.
//!
//! Input: any text (a message from `state.db`, a transcript line, a provider utterance). Output: its
//! words, case-folded, each tagged with a caller-defined position. The oracle compares word
//! sequences, never characters, so that wrapping, panel borders, markdown styling and punctuation
//! don't matter; both sides of every comparison go through [`words`], so the rules below only need to
//! be *consistent*, not linguistically perfect.
//!
//! The rules, in order:
//! 1. UAX-29 word segments (`unicode_segmentation::UnicodeSegmentation::split_word_bound_indices`).
//! 2. Han ideographs, Hiragana and Katakana count **one word per grapheme cluster**. UAX-29 already
//!    yields single Han ideographs and single Hiragana, but it keeps a Katakana run together
//!    (`カタカナ` is one segment, rule WB13) and joins Katakana to letters through `_` (WB13a/b).
//!    Japanese has no spaces, so a terminal wraps it anywhere, including inside a Katakana run;
//!    splitting every kana keeps a wrapped line's words equal to the stored text's words. Grapheme
//!    clusters (not chars) keep a voicing mark (`ﾅﾞ`, `か゛`) with its kana.
//! 3. Hangul follows UAX-29 unchanged: a space-delimited Korean word (`텍스트입니다`) is one word, the
//!    way Latin words are; terminals and markdown renderers wrap Korean at spaces. Thai, Lao and other
//!    scripts without spaces come out of this UAX-29 implementation one grapheme at a time, which is
//!    consistent on both sides and therefore fine for counting.
//! 4. Apostrophe variants (`'` `’` `‘` `‛` `ʼ` `＇`) are removed from inside a word, so `don't`,
//!    `don’t` and `donʼt` are all `dont` (clients and markdown renderers "smarten" quotes).
//! 5. Leading and trailing `_` and whitespace are trimmed (`_italic_` is markdown emphasis, shown
//!    as `italic`; UAX-29 treats `_` as a word character), inner ones kept (`snake_case`).
//! 6. Only segments with a letter or digit (`char::is_alphanumeric`) are words: punctuation,
//!    markdown markers (`**`, `#`, `-`), box drawing and emoji are dropped.
//! 7. Case folding is `str::to_lowercase` (full Unicode lowercase mapping, final sigma included);
//!    it is not full case folding (`ß` stays `ß`), which only matters if one side upper-cases text.
//! 8. A word that rules 4–7 changed, or that does not segment as one whole piece on its own, is
//!    segmented again until it is stable, so `words` is idempotent (the words of the words, joined
//!    by spaces, are the same words).
//!
//! Text is not Unicode-normalised (no NFC), because the terminal keeps the code points the client
//! wrote; a client that re-normalises would show as unmatched words, not as repeats.

use std::ops::Range;

use unicode_segmentation::UnicodeSegmentation;

/// A word with the index of the transcript line (or any caller-defined unit) it came from.
#[cfg(test)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    /// The case-folded word.
    pub(crate) text: String,
    /// Caller-defined position (the transcript line index for transcripts).
    pub(crate) at: usize,
}

/// Splits `text` into case-folded words, every word tagged with `at`.
#[cfg(test)]
pub(crate) fn words(text: &str, at: usize) -> Vec<Word> {
    word_spans(text)
        .into_iter()
        .map(|(_, text)| Word { text, at })
        .collect()
}

/// Splits `text` into case-folded words like [`words`], each with the byte range of `text` it was
/// taken from (before apostrophes and underscores were removed), for excerpts in the original
/// spelling. In rare cases one range carries more than one word (see `normalize`).
#[cfg(test)]
pub(crate) fn word_spans(text: &str) -> Vec<(Range<usize>, String)> {
    let mut out = Vec::new();
    each_word(text, &mut |range, word| out.push((range, word.to_owned())));
    out
}

/// Calls `f` with each word of `text` and the byte range it was taken from, in order — the words
/// of [`word_spans`], without allocating for the common ones (an ASCII word is lowercased into one
/// reused buffer): the oracle looks a million words up in its vocabulary.
pub(crate) fn each_word(text: &str, f: &mut impl FnMut(Range<usize>, &str)) {
    let mut lower = String::new();
    each_piece_known(text, &mut |range, known| {
        let raw = &text[range.clone()];
        if known == Known::Plain || (known == Known::Not && is_plain_word(raw)) {
            f(range, raw);
        } else if known == Known::Alphanumeric || raw.bytes().all(|b| b.is_ascii_alphanumeric()) {
            // Cleaning an ASCII letter/digit run only lowercases it, and the result is one
            // stable piece (rule 8 holds at once).
            lower.clear();
            lower.extend(raw.chars().map(|c| c.to_ascii_lowercase()));
            f(range, &lower);
        } else {
            for word in normalize(raw, 0) {
                f(range.clone(), &word);
            }
        }
    });
}

/// The raw word pieces of `text`: UAX-29 segments holding a letter or digit, with every CJK/kana
/// grapheme split off as a piece of its own (rule 2 of the module docs).
///
/// Most text is ASCII words between spaces, and UAX-29's table lookups are the cost of counting
/// (≈ 40 MB/s): tokens of printable ASCII between spaces are segmented by [`ascii_segments`], the
/// UAX-29 rules restricted to ASCII, and everything else by `unicode_segmentation`, with exactly
/// the same pieces (a property test compares both on mixed text). The cut points are safe: UAX-29
/// always breaks between a space and a printable ASCII character (no rule joins them), and a run of
/// spaces before other text goes with that text (WB3d joins spaces, WB4 attaches a combining mark
/// to the space before it).
fn pieces(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    each_piece(text, &mut |r| out.push(r));
    out
}

/// Calls `f` with each of [`pieces`]`(text)` in order, without collecting them (counting a
/// gigabyte of text must not hold a range per word).
fn each_piece(text: &str, f: &mut impl FnMut(Range<usize>)) {
    each_piece_known(text, &mut |range, _| f(range));
}

/// What [`each_piece_known`] learnt of a piece's bytes on its way (`Not`: nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Known {
    /// Lowercase ASCII letters and digits only ([`is_plain_word`]).
    Plain,
    /// ASCII letters and digits only, some uppercase.
    Alphanumeric,
    /// Nothing known.
    Not,
}

/// [`CLASS`] bit: printable ASCII other than space (0x21–0x7E).
const PRINTABLE: u8 = 1;
/// [`CLASS`] bit: an ASCII letter or digit.
const ALNUM: u8 = 2;
/// [`CLASS`] bit: a lowercase ASCII letter or a digit.
const PLAIN: u8 = 4;

/// The bits above for every byte, so that a token's bytes are classified with one lookup each.
const CLASS: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0x21;
    while b <= 0x7e {
        let c = b as u8;
        table[b] = PRINTABLE
            | if c.is_ascii_alphanumeric() { ALNUM } else { 0 }
            | if c.is_ascii_lowercase() || c.is_ascii_digit() {
                PLAIN
            } else {
                0
            };
        b += 1;
    }
    table
};

/// [`each_piece`], saying for each piece what its scan learnt ([`Known`]).
fn each_piece_known(text: &str, f: &mut impl FnMut(Range<usize>, Known)) {
    let bytes = text.as_bytes();
    // Start of the text not yet handed to UAX-29 (a run of spaces and non-ASCII tokens).
    let mut slow_from = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b' ' {
            i += 1;
            continue;
        }
        let start = i;
        // One pass over the token: is it printable ASCII, only letters and digits, lowercase?
        let mut class = PRINTABLE | ALNUM | PLAIN;
        while i < bytes.len() && bytes[i] != b' ' {
            class &= CLASS[usize::from(bytes[i])];
            i += 1;
        }
        let token = &bytes[start..i];
        if class & PRINTABLE != 0 {
            // Everything before this token's leading spaces goes to UAX-29 first.
            let spaces = bytes[..start]
                .iter()
                .rev()
                .take_while(|&&b| b == b' ')
                .count();
            let slow_to = start - spaces;
            if slow_from < slow_to {
                unicode_pieces(&text[slow_from..slow_to], slow_from, &mut |r| {
                    f(r, Known::Not)
                });
            }
            if class & PLAIN != 0 {
                // What `ascii_segments` gives for it: letters and digits all join (WB5–WB10).
                f(start..i, Known::Plain);
            } else if class & ALNUM != 0 {
                f(start..i, Known::Alphanumeric);
            } else {
                ascii_segments(token, start, &mut |r| f(r, Known::Not));
            }
            slow_from = i;
        }
    }
    if slow_from < bytes.len() {
        unicode_pieces(&text[slow_from..], slow_from, &mut |r| f(r, Known::Not));
    }
}

/// [`pieces`] of `text` by `unicode_segmentation`, offset by `base`.
fn unicode_pieces(text: &str, base: usize, out: &mut dyn FnMut(Range<usize>)) {
    for (start, segment) in text.split_word_bound_indices() {
        let start = base + start;
        // Fast path (most words): an ASCII letter/digit run has no CJK grapheme to split off.
        if segment.bytes().all(|b| b.is_ascii_alphanumeric()) {
            out(start..start + segment.len());
            continue;
        }
        if !segment.chars().any(char::is_alphanumeric) {
            continue;
        }
        // Graphemes that are not CJK/kana accumulate here and are flushed as one piece whenever a
        // CJK grapheme (a piece of its own) interrupts them.
        let mut pending: Option<Range<usize>> = None;
        for (offset, grapheme) in segment.grapheme_indices(true) {
            let range = start + offset..start + offset + grapheme.len();
            if grapheme.chars().next().is_some_and(is_cjk_one_each) {
                if let Some(p) = pending.take() {
                    out(p);
                }
                out(range);
            } else {
                pending = Some(match pending {
                    Some(p) => p.start..range.end,
                    None => range,
                });
            }
        }
        if let Some(p) = pending {
            out(p);
        }
    }
}

/// The word-break classes of printable ASCII (UAX-29 `Word_Break`; `"` is `Double_Quote`, which
/// only matters next to Hebrew letters, so it is `Other` here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wb {
    Letter,
    Numeric,
    ExtendNumLet,
    MidLetter,
    MidNumLet,
    SingleQuote,
    MidNum,
    Other,
}

fn wb(b: u8) -> Wb {
    match b {
        b'A'..=b'Z' | b'a'..=b'z' => Wb::Letter,
        b'0'..=b'9' => Wb::Numeric,
        b'_' => Wb::ExtendNumLet,
        b':' => Wb::MidLetter,
        b'.' => Wb::MidNumLet,
        b'\'' => Wb::SingleQuote,
        b',' | b';' => Wb::MidNum,
        _ => Wb::Other,
    }
}

/// True when UAX-29 keeps `token[i - 1]` and `token[i]` in one segment (rules WB5–WB13b on ASCII;
/// the rules for newlines, spaces, extenders, emoji, Hebrew and Katakana never apply to printable
/// ASCII without spaces).
fn ascii_joins(token: &[u8], i: usize) -> bool {
    use Wb::*;
    let class = |j: usize| token.get(j).map_or(Other, |&b| wb(b));
    let (before, l, r, after) = (
        if i >= 2 { class(i - 2) } else { Other },
        class(i - 1),
        class(i),
        class(i + 1),
    );
    let mid_letter = |c| matches!(c, MidLetter | MidNumLet | SingleQuote);
    let mid_num = |c| matches!(c, MidNum | MidNumLet | SingleQuote);
    match (l, r) {
        (Letter | Numeric, Letter | Numeric) => true, // WB5, WB8, WB9, WB10
        (Letter, m) if mid_letter(m) => after == Letter, // WB6
        (m, Letter) if mid_letter(m) => before == Letter, // WB7
        (Numeric, m) if mid_num(m) => after == Numeric, // WB12
        (m, Numeric) if mid_num(m) => before == Numeric, // WB11
        (Letter | Numeric | ExtendNumLet, ExtendNumLet) => true, // WB13a
        (ExtendNumLet, Letter | Numeric) => true,     // WB13b
        _ => false,
    }
}

/// The segments of a token of printable ASCII (no space) that hold a letter or digit, offset by
/// `base`.
fn ascii_segments(token: &[u8], base: usize, out: &mut dyn FnMut(Range<usize>)) {
    let mut start = 0;
    for i in 1..=token.len() {
        if i < token.len() && ascii_joins(token, i) {
            continue;
        }
        if token[start..i].iter().any(u8::is_ascii_alphanumeric) {
            out(base + start..base + i);
        }
        start = i;
    }
}

/// Removes apostrophes, trims `_` / whitespace / controls at both ends and lowercases; `None` when
/// nothing with a letter or digit remains.
fn clean(raw: &str) -> Option<String> {
    let stripped: String = raw.chars().filter(|c| !is_apostrophe(*c)).collect();
    // Whitespace can start a segment when a combining mark follows it (UAX-29 WB4 attaches the mark
    // to the space), so it is trimmed like `_`.
    let trimmed = stripped.trim_matches(|c: char| c == '_' || c.is_whitespace() || c.is_control());
    trimmed
        .chars()
        .any(char::is_alphanumeric)
        .then(|| trimmed.to_lowercase())
}

/// Normalises one raw piece into its words (usually exactly one, or none).
///
/// Cleaning can change how UAX-29 segments the result: `_ﾞ0` is one segment, but without the `_`
/// the voicing mark has no base and `ﾞ0` segments as `ﾞ`, `0`. A word must be a fixed point —
/// segmenting and cleaning it again gives itself — or [`words`] would not be idempotent, so a
/// changed piece is segmented and cleaned again until it is stable. Each round either stops, splits
/// into strictly shorter pieces or removes characters; the depth bound is a belt for Unicode case
/// mappings that might not be idempotent.
fn normalize(raw: &str, depth: usize) -> Vec<String> {
    if is_plain_word(raw) {
        return vec![raw.to_string()];
    }
    let Some(word) = clean(raw) else {
        return Vec::new();
    };
    let again = pieces(&word);
    // Stable when cleaning changed nothing AND the word alone segments as one whole piece. A piece
    // cut out of a longer segment may not: `ᝠ:〻` is one UAX-29 segment (`:` is MidLetter between
    // letters); rule 2 splits off `〻`, leaving `ᝠ:`, which alone segments as `ᝠ` (found by the
    // idempotence property at 300 000 cases).
    let whole = again.len() == 1 && again[0] == (0..word.len());
    if (word == raw && whole) || depth >= 8 {
        return vec![word];
    }
    again
        .into_iter()
        .flat_map(|r| normalize(&word[r], depth + 1))
        .collect()
}

/// Returns true if and only if `raw` is a non-empty run of lowercase ASCII letters and digits:
/// a piece that cleaning leaves unchanged, so it is one stable word as it is.
fn is_plain_word(raw: &str) -> bool {
    !raw.is_empty()
        && raw
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// The number of words of `text`: `words(text, _).len()` without building them.
pub fn count(text: &str) -> usize {
    let mut n = 0;
    each_piece_known(text, &mut |r, known| {
        let raw = &text[r];
        // An ASCII letter/digit run is one word, lowercased or not (as in `each_word`).
        n += if known != Known::Not || is_plain_word(raw) {
            1
        } else {
            normalize(raw, 0).len()
        };
    });
    n
}

/// Returns true if and only if `c` is one of the apostrophe variants removed from words.
fn is_apostrophe(c: char) -> bool {
    matches!(
        c,
        '\u{0027}' | '\u{2018}' | '\u{2019}' | '\u{201B}' | '\u{02BC}' | '\u{FF07}'
    )
}

/// Returns true if and only if `c` starts a grapheme that counts as one word on its own: Han
/// ideographs (with the ideographic iteration/closing marks), Hiragana, Katakana (full and half
/// width, with the prolonged sound mark).
fn is_cjk_one_each(c: char) -> bool {
    matches!(c as u32,
        0x3005..=0x3007          // 々 〆 〇
        | 0x3021..=0x3029        // Hangzhou numerals
        | 0x3038..=0x303C        // more ideographic marks
        | 0x3040..=0x309F        // Hiragana
        | 0x30A0..=0x30FF        // Katakana (incl. ー)
        | 0x31F0..=0x31FF        // Katakana phonetic extensions
        | 0x3400..=0x4DBF        // CJK extension A
        | 0x4E00..=0x9FFF        // CJK unified ideographs
        | 0xF900..=0xFAFF        // CJK compatibility ideographs
        | 0xFF66..=0xFF9F        // half-width Katakana
        | 0x1B000..=0x1B16F      // Kana supplement / extended
        | 0x20000..=0x3FFFF      // CJK extensions B..H, compatibility supplement
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The pieces by UAX-29 alone, as before the ASCII path existed.
    fn unicode_only(text: &str) -> Vec<Range<usize>> {
        let mut out = Vec::new();
        unicode_pieces(text, 0, &mut |r| out.push(r));
        out
    }

    #[test]
    fn the_ascii_path_cuts_as_uax29_does() {
        for text in [
            "can't won't e.g. 3.14 1,000,000 a:b a.b. _x_ x__y __ 1_a a1 U.S.A. 'q' \"d\" ---",
            "foo.bar: baz;qux 12;34 12.a a.12 ab'cd' x:y:z",
            "caf\u{e9} na\u{ef}ve x \u{301}y  \u{301} a\u{3000} b \u{5149}\u{660e} \u{30ab}\u{30bf}",
            "  leading and trailing  ",
            "",
        ] {
            assert_eq!(pieces(text), unicode_only(text), "{text:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]
        #[test]
        fn the_ascii_path_equals_uax29_on_mixed_text(
            text in "([a-zA-Z0-9_:.,;'\"!?()\\-]{0,6}|[ ]{1,3}|[\u{e9}\u{301}\u{200d}\u{3000}\u{5149}\u{30ab}\u{d55c}\u{1f600}\t\n]){0,24}"
        ) {
            prop_assert_eq!(pieces(&text), unicode_only(&text));
        }

        #[test]
        fn each_word_gives_the_normalised_words(
            text in "([a-zA-Z0-9_:.,;'\"!?()\\-]{0,6}|[ ]{1,3}|[\u{e9}\u{c9}\u{301}\u{2019}\u{3000}\u{5149}\u{30ab}\u{d55c}\t\n]){0,24}"
        ) {
            let mut got = Vec::new();
            each_word(&text, &mut |r, w| got.push((r, w.to_owned())));
            let want: Vec<(Range<usize>, String)> = pieces(&text)
                .into_iter()
                .flat_map(|r| normalize(&text[r.clone()], 0).into_iter().map(move |w| (r.clone(), w)))
                .collect();
            prop_assert_eq!(got, want);
        }

        #[test]
        fn the_ascii_path_equals_uax29_on_any_printable_ascii(text in "[ -~]{0,80}") {
            prop_assert_eq!(pieces(&text), unicode_only(&text));
        }
    }

    fn texts(s: &str) -> Vec<String> {
        words(s, 0).into_iter().map(|w| w.text).collect()
    }

    #[test]
    fn words_latin_are_case_folded_and_punctuation_dropped() {
        assert_eq!(
            texts("The Keeper, of the LIGHTHOUSE! — 42 times…"),
            ["the", "keeper", "of", "the", "lighthouse", "42", "times"]
        );
    }

    /// Regression (fuzzing): a piece left over after rule 2 splits off a CJK mark must be
    /// segmented again, or `words` is not idempotent.
    #[test]
    fn a_piece_left_by_a_cjk_split_is_segmented_again() {
        assert_eq!(texts("ᝠ:〻"), ["ᝠ", "〻"]);
        assert_eq!(texts(&texts("ᝠ:〻").join(" ")), ["ᝠ", "〻"]);
    }

    #[test]
    fn words_carry_their_position() {
        let w = words("a b", 7);
        assert_eq!(w.len(), 2);
        assert!(w.iter().all(|w| w.at == 7));
    }

    #[test]
    fn words_apostrophe_variants_match() {
        let straight = texts("don't it's O'Neill");
        assert_eq!(straight, ["dont", "its", "oneill"]);
        assert_eq!(texts("don’t it’s O’Neill"), straight);
        assert_eq!(texts("don‘t itʼs O＇Neill"), straight);
    }

    #[test]
    fn words_markdown_styling_is_invisible() {
        let plain = texts("Heading\nbold and italic text\nitem one\nsnake_case");
        assert_eq!(
            texts("# Heading\n**bold** and _italic_ `text`\n- item one\n__snake_case__"),
            plain
        );
        assert!(plain.contains(&"snake_case".to_string()));
    }

    #[test]
    fn words_han_one_per_ideograph() {
        assert_eq!(texts("中文abc中文"), ["中", "文", "abc", "中", "文"]);
        assert_eq!(texts("灯塔守护者。"), ["灯", "塔", "守", "护", "者"]);
    }

    #[test]
    fn words_kana_one_per_grapheme() {
        // UAX-29 keeps "テキスト" and "カタカナ" together; we split them (wrapping robustness).
        assert_eq!(
            texts("日本語のテキスト、カタカナ"),
            ["日", "本", "語", "の", "テ", "キ", "ス", "ト", "カ", "タ", "カ", "ナ"]
        );
        // Half-width kana keeps its voicing mark (one grapheme cluster).
        assert_eq!(texts("ｶﾀﾞ"), ["ｶ", "ﾀﾞ"]);
    }

    #[test]
    fn words_kana_wrapped_anywhere_gives_same_words() {
        let whole = texts("コンピュータープログラム");
        let wrapped = [texts("コンピュー"), texts("タープログラム")].concat();
        assert_eq!(whole, wrapped);
    }

    #[test]
    fn words_hangul_per_uax29_word() {
        assert_eq!(texts("한국어 텍스트입니다."), ["한국어", "텍스트입니다"]);
    }

    #[test]
    fn words_emoji_and_box_drawing_dropped() {
        assert_eq!(texts("│ 👍 ok ─── ╭╮ 🎉 "), ["ok"]);
        assert!(texts("").is_empty());
        assert!(texts("*** --- ''' ___").is_empty());
    }

    #[test]
    fn word_spans_point_into_original_text() {
        let text = "Don’t **panic**, 中文";
        let spans = word_spans(text);
        let originals: Vec<&str> = spans.iter().map(|(r, _)| &text[r.clone()]).collect();
        assert_eq!(originals, ["Don’t", "panic", "中", "文"]);
        assert_eq!(spans[0].1, "dont");
    }

    proptest! {
        #[test]
        fn words_never_panic_and_are_idempotent(s in any::<String>()) {
            let once = texts(&s);
            let again = texts(&once.join(" "));
            prop_assert_eq!(again, once);
        }

        #[test]
        fn words_idempotent_on_mixed_scripts(
            s in "[a-zA-Z0-9 '’_.,#*\\-\n中文日本語のテキストカタカナ한국어ｶﾀﾞ👍]{0,60}"
        ) {
            let once = texts(&s);
            prop_assert!(once.iter().all(|w| !w.is_empty() && w.chars().any(char::is_alphanumeric)));
            let again = texts(&once.join(" "));
            prop_assert_eq!(again, once);
        }

        #[test]
        fn count_is_the_number_of_words(
            s in "[a-zA-Z0-9 '’_.,#*\\-\n中文日本語のテキストカタカナ한국어ｶﾀﾞ👍ÀÉß]{0,80}"
        ) {
            prop_assert_eq!(count(&s), words(&s, 0).len());
        }

        #[test]
        fn count_is_the_number_of_words_on_any_text(s in any::<String>()) {
            prop_assert_eq!(count(&s), words(&s, 0).len());
        }
    }
}
