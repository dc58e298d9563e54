//! Text as the client prepares it for the recap.
//!
//! Python string semantics, escape sanitising, and the reasoning and tool-call markup the client
//! strips from assistant text.

use std::sync::LazyLock;

use regex::Regex;

use super::ClientVersion;

/// Python `str.isspace` (Rust's `White_Space` plus the separators U+001C–U+001F).
fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python `str.strip()`.
pub(super) fn py_strip(s: &str) -> &str {
    s.trim_matches(py_space)
}

/// Python `str.splitlines()`: `\n`, `\r`, `\r\n`, `\v`, `\f`, U+001C–U+001E, U+0085, U+2028,
/// U+2029 end a line; no empty last line for a trailing break; `""` has no lines.
pub(super) fn py_splitlines(s: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut it = s.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        let brk = matches!(
            c,
            '\n' | '\r'
                | '\u{0b}'
                | '\u{0c}'
                | '\u{1c}'
                | '\u{1d}'
                | '\u{1e}'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        );
        if brk {
            lines.push(&s[start..i]);
            let mut end = i + c.len_utf8();
            if c == '\r' {
                if let Some(&(j, '\n')) = it.peek() {
                    it.next();
                    end = j + 1;
                }
            }
            start = end;
        }
    }
    if start < s.len() {
        lines.push(&s[start..]);
    }
    lines
}

/// How many of `len` items `seq[:n]` keeps (Python slice semantics, `n` may be negative).
pub(super) fn py_prefix_len(len: usize, n: i64) -> usize {
    if n >= 0 {
        len.min(usize::try_from(n).unwrap_or(usize::MAX))
    } else {
        len.saturating_sub(usize::try_from(n.unsigned_abs()).unwrap_or(usize::MAX))
    }
}

/// The first `n` code points of `s`.
pub(super) fn first_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

static ANSI_ESCAPE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?s)\x1b(?:\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]|\].*?(?:\x07|\x1b\\)|[PX^_].*?\x1b\\",
        r"|[\x20-\x2f]+[\x30-\x7e]|[\x30-\x7e])",
        r"|\x{9b}[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]|\x{9d}.*?(?:\x07|\x{9c})|[\x{80}-\x{9f}]"
    ))
    .expect("regex")
});

/// `tools/ansi_strip.sanitize_display_text` (same in both versions): when the text holds any
/// control character, ANSI sequences are removed, CR/CRLF become LF and the remaining C0 controls
/// (but tab and LF) and DEL are dropped.
pub(super) fn sanitize(text: &str) -> String {
    let has_control =
        |c: char| matches!(c, '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}');
    if !text.chars().any(has_control) {
        return text.to_string();
    }
    let mut t = if text
        .chars()
        .any(|c| c == '\u{1b}' || ('\u{80}'..='\u{9f}').contains(&c))
    {
        ANSI_ESCAPE.replace_all(text, "").into_owned()
    } else {
        text.to_string()
    };
    if t.contains('\r') {
        t = t.replace("\r\n", "\n").replace('\r', "\n");
    }
    t.chars()
        .filter(|&c| !matches!(c, '\u{0}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{7f}'))
        .collect()
}

/// One substitution step of `_strip_reasoning_tags`.
enum Strip {
    /// `re.sub(pattern, "", text)`.
    All(Regex),
    /// The `<function name=…>` block: only where the match starts the text or follows one of
    /// `\n \r . ! ? :` (the client's lookbehind, which `regex` has not).
    AfterBoundary(Regex),
}

const TOOL_CALL_TAGS: [&str; 5] = [
    "tool_call",
    "tool_calls",
    "tool_result",
    "function_call",
    "function_calls",
];
const FUNCTION_BLOCK: &str = r"(?is)[ \t]*<function\b[^>]*\bname\s*=[^>]*>.*?</function>\s*";

/// The reasoning tags both versions strip, in this order (each adds its own before or after).
const REASONING_TAGS: [&str; 4] = ["think", "thinking", "reasoning", "thought"];

fn reasoning_steps(tags: &[&str]) -> Vec<Strip> {
    let mut steps = Vec::new();
    for tag in tags {
        let t = regex::escape(tag);
        steps.push(Strip::All(
            Regex::new(&format!(r"(?is)<{t}>.*?</{t}>\s*")).expect("regex"),
        ));
        steps.push(Strip::All(
            Regex::new(&format!(r"(?is)<{t}>.*$")).expect("regex"),
        ));
        steps.push(Strip::All(
            Regex::new(&format!(r"(?i)</{t}>\s*")).expect("regex"),
        ));
    }
    steps
}

/// The tool-call markup steps, tags optionally prefixed by the namespace pattern `ns` (iot):
/// every tool-call block, the `<function name=…>` block, then stray closing tags.
fn tool_call_steps(ns: &str) -> Vec<Strip> {
    let mut steps = Vec::new();
    for tc in TOOL_CALL_TAGS {
        steps.push(Strip::All(
            Regex::new(&format!(r"(?is)<{ns}{tc}\b[^>]*>.*?</{ns}{tc}>\s*")).expect("regex"),
        ));
    }
    steps.push(Strip::AfterBoundary(
        Regex::new(FUNCTION_BLOCK).expect("regex"),
    ));
    let names = TOOL_CALL_TAGS.join("|");
    steps.push(Strip::All(
        Regex::new(&format!(r"(?i)</(?:{ns}(?:{names}|function))>\s*")).expect("regex"),
    ));
    steps
}

/// 0.19 `cli.py:242-311`.
static STRIP_019: LazyLock<Vec<Strip>> = LazyLock::new(|| {
    let mut steps = reasoning_steps(&[&["REASONING_SCRATCHPAD"][..], &REASONING_TAGS].concat());
    // Tool-call blocks, the `<function name=…>` block and the closing tags, without a namespace.
    steps.extend(tool_call_steps(""));
    steps
});

/// iot `hermes_cli/cli_render.py:33-68` with `agent/agent_runtime_helpers.py:43-80` and
/// `agent/think_scrubber.py:23-26`.
static STRIP_IOT: LazyLock<Vec<Strip>> = LazyLock::new(|| {
    let mut steps = reasoning_steps(
        &[
            &REASONING_TAGS[..],
            &["REASONING_SCRATCHPAD", "思考", "反思", "推理", "推敲"],
        ]
        .concat(),
    );
    let ns = r"(?:[\w.-]+:)?";
    steps.extend(tool_call_steps(ns));
    let names = TOOL_CALL_TAGS.join("|");
    // `(?=\n|$)` of the client is `(?m:$)` here: before a `\n` or at the end.
    steps.push(Strip::All(
        Regex::new(&format!(
            r"(?is)(?:^|\n)[ \t]*<{ns}(?:{names})\b[^>]*>.*$|(?:^|\n)[ \t]*[\w.:-]*</?arg_(?:key|value)\b[^\n]*|(?:^|\n)[^\n<]*</arg_(?:key|value)>[ \t\r]*(?m:$)"
        ))
        .expect("regex"),
    ));
    steps
});

/// `re.sub` of a pattern whose match must start the text or follow one of `\n \r . ! ? :`.
fn replace_after_boundary(re: &Regex, text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut pos = 0;
    while pos <= text.len() {
        let Some(m) = re.find_at(text, pos) else {
            break;
        };
        let ok = m.start() == 0
            || matches!(
                text[..m.start()].chars().next_back(),
                Some('\n' | '\r' | '.' | '!' | '?' | ':')
            );
        if ok && !m.as_str().is_empty() {
            out.push_str(&text[copied..m.start()]);
            copied = m.end();
            pos = m.end();
        } else {
            // Try the next start position, as the client's engine does after a failed lookbehind.
            match text[m.start()..].chars().next() {
                Some(c) => pos = m.start() + c.len_utf8(),
                None => break,
            }
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// `_strip_reasoning_tags` of the version: reasoning blocks and leaked tool-call XML removed,
/// then `.strip()`.
fn strip_reasoning(text: &str, version: ClientVersion) -> String {
    let steps = match version {
        ClientVersion::V0_19 => &*STRIP_019,
        ClientVersion::Iot0_22 => &*STRIP_IOT,
    };
    let mut t = text.to_string();
    for step in steps.iter() {
        t = match step {
            Strip::All(re) => re.replace_all(&t, "").into_owned(),
            Strip::AfterBoundary(re) => replace_after_boundary(re, &t),
        };
    }
    py_strip(&t).to_string()
}

/// The assistant text the recap works on: `sanitize(_strip_reasoning_tags(content))`.
pub(super) fn clean_assistant(text: &str, version: ClientVersion) -> String {
    sanitize(&strip_reasoning(text, version))
}
