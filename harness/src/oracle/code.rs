//! Code drawn other than stored: `code_words_altered` (display contract rule 11).
//!
//! A reply's code — the contents of its fenced and indented code blocks and its inline code spans,
//! as CommonMark reads the stored text — is what the user copies and runs, and every way the
//! client draws a reply keeps it verbatim: a markdown renderer drops the fences and backticks
//! around it, never what is inside. Outside code, emphasis markers are markup a renderer may drop
//! (`**bold**` drawn as `bold` is a correct `strip`), so only code is judged.
//!
//! A *code word* is a whitespace-separated token of code that holds a letter or digit and a
//! character a markdown pass acts on ([`MARKUP`]: `_ * ` `` ` `` ` ~ # [ ] < > \ |`) — the tokens
//! a stripping pass can alter (`__init__` drawn as `init`, `**kwargs` as `kwargs`, upstream
//! #84377, #73212). For each assistant message drawn whole (a rendering covering every one of its
//! words, so nothing a recap cut is judged), each code word must be drawn as often as the message's
//! code holds it: `altered = Σ_tokens max(0, in code − drawn verbatim)` over the rendering's
//! history lines, counted on the lines as drawn and on the lines joined without their line breaks,
//! leading indent and quote bars (a code line the client wrapped itself); a word cut to the width
//! with `…` counts as drawn. A message drawn whole more than once in a view counts its worst
//! rendering. Code in a table cell is not judged (a cell is laid out to its column). Anything else
//! the lines draw verbatim only lowers the count: the finding never reads more than the client
//! altered.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use super::vocabulary::excerpt;
use super::{Drawn, PreparedExpected};
use crate::display::{Expected, Role};
use crate::terminal::Transcript;

/// A reply drawn whole with code words other than stored ([`super::Findings::code_words_altered`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AlteredCode {
    /// The reply's first words.
    pub(crate) excerpt: String,
    /// Its stored rows.
    pub(crate) rows: Vec<i64>,
    /// The history rows of the rendering judged (first, last; inclusive; 0 = oldest row).
    #[serde(skip)]
    pub(crate) drawn: (usize, usize),
    /// Each code word not drawn verbatim, with how many of its occurrences were not.
    pub(crate) words: Vec<(String, usize)>,
}

impl AlteredCode {
    /// The code words altered, occurrences counted.
    pub fn count(&self) -> usize {
        self.words.iter().map(|(_, n)| n).sum()
    }
}

/// Every assistant message drawn whole whose code a rendering altered: for each, its worst
/// rendering in this view (the most code words altered; the first of equals), in the order of
/// [`Expected::messages`].
pub(crate) fn altered_replies(
    expected: &Expected,
    prepared: &PreparedExpected,
    drawn: &[Drawn],
    transcript: &Transcript,
) -> Vec<AlteredCode> {
    let mut worst: Vec<Option<AlteredCode>> = vec![None; expected.messages.len()];
    let mut code: Vec<Option<Vec<(String, usize)>>> = vec![None; expected.messages.len()];
    for d in drawn {
        let Some(m) = d.message else { continue };
        let Some(msg) = expected.messages.get(m) else {
            continue;
        };
        let len = prepared.words.messages.get(m).map_or(0, |t| t.ids.len());
        if msg.role != Role::Assistant || len == 0 || d.words < len {
            continue; // only a reply drawn whole: what a recap cut is not judged
        }
        let words = code[m].get_or_insert_with(|| code_words(&msg.text));
        if words.is_empty() {
            continue;
        }
        let lines: Vec<&str> = transcript
            .lines
            .iter()
            .filter(|l| (d.rows.0..=d.rows.1).contains(&l.row))
            .map(|l| l.text.as_str())
            .collect();
        let found = altered(words, &lines);
        let n: usize = found.iter().map(|(_, n)| n).sum();
        if n > worst[m].as_ref().map_or(0, AlteredCode::count) {
            worst[m] = Some(AlteredCode {
                excerpt: excerpt(&msg.text, 0..len),
                rows: msg.rows.iter().map(|r| r.id).collect(),
                drawn: d.rows,
                words: found,
            });
        }
    }
    worst.into_iter().flatten().collect()
}

/// What a client draws at the start of a quoted line (`▌ ` in Rich, `│`, `>`).
const QUOTE_BARS: &[char] = &['▌', '│', '┃', '>'];

/// How a client marks a word it cut to the width it had.
const ELLIPSIS: char = '…';

/// The characters a markdown pass acts on: a code word holds one of them.
pub(crate) const MARKUP: &[char] = &['_', '*', '`', '~', '#', '[', ']', '<', '>', '\\', '|'];

/// The code of `text` as CommonMark (with GitHub's tables) reads it: each code block's contents
/// and each inline code span outside a table, in order. A table cell is laid out to its column's
/// width (Rich cuts it with `…`, a GFM table unescapes `\|`), so its code is not judged.
pub(crate) fn code_of(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut block: Option<String> = None;
    let mut in_cell = false;
    for event in Parser::new_ext(text, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::CodeBlock(_)) => block = Some(String::new()),
            Event::End(TagEnd::CodeBlock) => out.extend(block.take()),
            Event::Start(Tag::TableCell) => in_cell = true,
            Event::End(TagEnd::TableCell) => in_cell = false,
            Event::Text(t) => {
                if let Some(b) = block.as_mut() {
                    b.push_str(&t);
                }
            }
            Event::Code(c) if !in_cell => out.push(c.into_string()),
            _ => {}
        }
    }
    out
}

/// The code words of `text` ([`code_of`], split at whitespace, kept when they hold a letter or
/// digit and a [`MARKUP`] character), each with how often the code holds it.
pub(crate) fn code_words(text: &str) -> Vec<(String, usize)> {
    let mut words: Vec<(String, usize)> = Vec::new();
    for code in code_of(text) {
        for token in code.split_whitespace() {
            let judged = token.contains(MARKUP) && token.chars().any(char::is_alphanumeric);
            if !judged {
                continue;
            }
            match words.iter_mut().find(|(w, _)| w == token) {
                Some((_, n)) => *n += 1,
                None => words.push((token.to_owned(), 1)),
            }
        }
    }
    words
}

/// The code words of `words` ([`code_words`] of one message) that `lines` — the history lines of
/// one rendering of it — do not draw verbatim, as `(word, times altered)`.
pub(crate) fn altered(words: &[(String, usize)], lines: &[&str]) -> Vec<(String, usize)> {
    if words.is_empty() {
        return Vec::new();
    }
    let drawn = lines.join("\n");
    // A line the client wrapped itself goes on after its indent and a quote's bar.
    let joined: String = lines
        .iter()
        .map(|l| l.trim_start_matches(|c: char| c.is_whitespace() || QUOTE_BARS.contains(&c)))
        .collect();
    // A word the client cut to its width (`final_respon…`): drawn as far as it goes.
    let cut: Vec<&str> = drawn
        .match_indices(ELLIPSIS)
        .filter_map(|(at, _)| {
            let before = &drawn[..at];
            let start = before
                .char_indices()
                .rev()
                .find(|(_, c)| c.is_whitespace())
                .map_or(0, |(i, c)| i + c.len_utf8());
            Some(&before[start..]).filter(|stem| !stem.is_empty())
        })
        .collect();
    words
        .iter()
        .filter_map(|(w, n)| {
            let whole = drawn
                .matches(w.as_str())
                .count()
                .max(joined.matches(w.as_str()).count());
            let cut_short = cut.iter().filter(|stem| w.starts_with(**stem)).count();
            let seen = whole + cut_short;
            (seen < *n).then(|| (w.clone(), n - seen))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPLY: &str = "Subclass it and override `__init__`; the base keeps a `__dict__` and reads __slots__ first.\n\
\n\
Pass **kwargs through and forward them with **kwargs again.\n\
\n\
```python\n\
class Keeper(Base):\n\
    def __init__(self, *args, **kwargs):\n\
        super().__init__(*args, **kwargs)\n\
```\n\
\n\
That is the pattern: __init__, **kwargs and super().";

    #[test]
    fn code_is_the_spans_and_blocks_not_the_prose() {
        let words = code_words(REPLY);
        let names: Vec<&str> = words.iter().map(|(w, _)| w.as_str()).collect();
        assert_eq!(
            names,
            [
                "__init__",
                "__dict__",
                "__init__(self,",
                "*args,",
                "**kwargs):",
                "super().__init__(*args,",
                "**kwargs)"
            ]
        );
        // `__slots__` and `**kwargs` in prose are emphasis a renderer may drop: not judged.
        assert!(!names.contains(&"__slots__"));
    }

    #[test]
    fn a_stripped_reply_alters_its_code_and_a_raw_one_does_not() {
        let words = code_words(REPLY);
        let raw: Vec<&str> = REPLY.lines().collect();
        assert_eq!(altered(&words, &raw), []);
        let stripped = [
            "Subclass it and override init; the base keeps a dict and reads slots first.",
            "Pass kwargs through and forward them with kwargs again.",
            "python",
            "class Keeper(Base):",
            "    def init(self, *args, **kwargs):",
            "        super().init(*args, **kwargs)",
            "That is the pattern: init, **kwargs and super().",
        ];
        let got = altered(&words, &stripped);
        assert_eq!(
            got,
            [
                ("__init__".to_owned(), 1),
                ("__dict__".to_owned(), 1),
                ("__init__(self,".to_owned(), 1),
                ("super().__init__(*args,".to_owned(), 1)
            ]
        );
    }

    #[test]
    fn a_code_line_the_client_wrapped_is_not_altered() {
        let words = code_words("```\nsuper().__init__(*args, **kwargs)\n```");
        let wrapped = ["super().__in", "  it__(*args, **kwa", "rgs)"];
        assert_eq!(altered(&words, &wrapped), []);
    }

    #[test]
    fn laid_out_code_is_not_altered() {
        // A table cell's code span is not judged (Rich cuts cells with `…`).
        let words = code_words("| name | use |\n|---|---|\n| `final_response_markdown` | x |\n");
        assert_eq!(words, []);
        // A word cut to the width, a quoted code line wrapped after its bar.
        let words =
            code_words("`__init__` and\n\n> ```\n> super().__init__(*args, **kwargs)\n> ```");
        assert_eq!(
            altered(
                &words,
                &["__in… and", "▌ super().__in", "▌ it__(*args, **kwargs)"]
            ),
            []
        );
    }

    #[test]
    fn each_occurrence_must_be_drawn() {
        let words = code_words("`a_b` and `a_b`");
        assert_eq!(words, [("a_b".to_owned(), 2)]);
        assert_eq!(altered(&words, &["a_b and ab"]), [("a_b".to_owned(), 1)]);
    }

    #[test]
    fn tokens_without_markup_or_letters_are_not_judged() {
        assert_eq!(code_words("`x = 1` and `**` and `->`"), []);
    }

    proptest::proptest! {
        /// Planted defects at exact size: a reply with `k` code words, each in a code span or in
        /// a fenced block, drawn verbatim reads 0 at any wrap width; with `m` of them stripped
        /// of their underscores it reads exactly `m` — and the prose's own dunder names,
        /// stripped as emphasis, never count.
        #[test]
        fn planted_alterations_are_counted_exactly(
            names in proptest::collection::vec("[a-z]{2,8}", 1..12),
            in_block in proptest::collection::vec(proptest::bool::ANY, 12),
            altered_mask in proptest::collection::vec(proptest::bool::ANY, 12),
            width in 12usize..100,
        ) {
            // Distinct names, so one name's verbatim form is never another's.
            let mut seen = std::collections::HashSet::new();
            let names: Vec<String> = names.into_iter().filter(|n| seen.insert(n.clone())).collect();
            let word = |n: &str| format!("__{n}__");
            let mut text = String::from("Prose with __emphasis__ first.\n\n");
            let mut block = Vec::new();
            for (i, n) in names.iter().enumerate() {
                if in_block[i] {
                    block.push(format!("call({})", word(n)));
                } else {
                    text.push_str(&format!("Use `{}` here. ", word(n)));
                }
            }
            text.push_str("\n\n```\n");
            text.push_str(&block.join("\n"));
            text.push_str("\n```\n");
            let words = code_words(&text);
            proptest::prop_assert_eq!(words.len(), names.len());
            // Drawn: fences and backticks dropped, the prose's emphasis stripped, code kept or
            // (for the planted ones) stripped; then wrapped at `width` as a client would.
            let mut planted = 0;
            let draw = |n: &str, i: usize, planted: &mut usize| {
                if altered_mask[i] {
                    *planted += 1;
                    n.to_owned()
                } else {
                    word(n)
                }
            };
            let mut drawn = String::from("Prose with emphasis first.\n");
            let mut drawn_block = Vec::new();
            for (i, n) in names.iter().enumerate() {
                let w = draw(n, i, &mut planted);
                if in_block[i] {
                    drawn_block.push(format!("call({w})"));
                } else {
                    drawn.push_str(&format!("Use {w} here. "));
                }
            }
            drawn.push('\n');
            drawn.push_str(&drawn_block.join("\n"));
            let mut lines = Vec::new();
            for line in drawn.lines() {
                let chars: Vec<char> = line.chars().collect();
                for chunk in chars.chunks(width) {
                    lines.push(chunk.iter().collect::<String>());
                }
            }
            let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
            let got: usize = altered(&words, &lines).iter().map(|(_, n)| n).sum();
            proptest::prop_assert_eq!(got, planted);
        }
    }
}
