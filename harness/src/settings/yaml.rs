//! YAML as the client reads it: YAML 1.1 scalars (PyYAML on 0.19, ruamel on iot).

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser, Tag};
use yaml_rust2::scanner::{Marker, TScalarStyle};

use super::text::py_strip;
use super::ClientVersion;

/// A YAML value after the client's (YAML 1.1) scalar resolution.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Seq(Vec<Value>),
    Map(Vec<(Value, Value)>),
}

impl Value {
    pub(super) fn describe(&self) -> String {
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
    pub(super) fn truthy(&self) -> bool {
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
pub(super) fn lookup<'a>(entries: &'a [(Value, Value)], key: &str) -> Option<&'a Value> {
    entries
        .iter()
        .rev()
        .find(|(k, _)| matches!(k, Value::Str(s) if s == key))
        .map(|(_, v)| v)
}

/// Why Python's `int()` refuses a setting's value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum IntError {
    /// A float that is not finite.
    #[error("{0} is not finite, which int() cannot convert")]
    NotFinite(f64),
    /// A string that is not an integer literal.
    #[error("{0:?} is not an integer (int() raises ValueError)")]
    NotInteger(String),
    /// Neither a number nor a string (described).
    #[error("{0} is not a number (int() raises TypeError)")]
    NotNumber(String),
    /// An integer out of the settings' range.
    #[error("{0} is out of range")]
    Range(i128),
}

/// Why a config is not YAML the client's parser accepts.
#[derive(Debug, thiserror::Error)]
pub enum YamlError {
    /// The parser's error.
    #[error(transparent)]
    Syntax(#[from] yaml_rust2::ScanError),
    /// An alias without its anchor.
    #[error("unknown alias (anchor id {0})")]
    UnknownAlias(usize),
    /// More than one document.
    #[error("{0} documents in one file (the client's safe_load expects one)")]
    Documents(usize),
    /// A merge key `<<` on what is not a mapping (described).
    #[error("merge key `<<` on {0}")]
    Merge(String),
    /// A key given twice (described), which ruamel refuses.
    #[error("duplicate key {0}")]
    DuplicateKey(String),
}

/// Python `int(value)` as the recap applies it to a setting.
pub(super) fn py_int(value: &Value) -> Result<i64, IntError> {
    let wide: i128 = match value {
        Value::Bool(b) => i128::from(*b),
        Value::Int(i) => *i,
        Value::Float(f) if f.is_finite() => f.trunc() as i128,
        Value::Float(f) => return Err(IntError::NotFinite(*f)),
        Value::Str(s) => py_int_literal(s).ok_or_else(|| IntError::NotInteger(s.clone()))?,
        other => return Err(IntError::NotNumber(other.describe())),
    };
    i64::try_from(wide).map_err(|_| IntError::Range(wide))
}

/// Python `int(s)` for a string, base 10: surrounding whitespace, a sign, ASCII digits with single
/// underscores between them. (Non-ASCII decimal digits, which Python also accepts, are refused.)
pub(super) fn py_int_literal(s: &str) -> Option<i128> {
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
    error: Option<YamlError>,
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
                None => self.error = Some(YamlError::UnknownAlias(id)),
            },
            _ => {}
        }
    }
}

/// Parses one YAML document with the client's YAML 1.1 scalar rules.
pub(super) fn parse_yaml(text: &str, version: ClientVersion) -> Result<Value, YamlError> {
    let mut builder = Builder::default();
    Parser::new_from_str(text).load(&mut builder, true)?;
    if let Some(error) = builder.error {
        return Err(error);
    }
    match builder.docs.len() {
        0 => Ok(Value::Null),
        1 => resolve(&builder.docs[0], version),
        n => Err(YamlError::Documents(n)),
    }
}

/// YAML 1.1 resolution of a node (PyYAML on 0.19, ruamel 1.1 on iot).
fn resolve(node: &Node, version: ClientVersion) -> Result<Value, YamlError> {
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
                        other => return Err(YamlError::Merge(other.describe())),
                    };
                    // Earlier sources in a `<<: [a, b]` list win over later ones.
                    for source in sources.into_iter().rev() {
                        match source {
                            Value::Map(m) => merged.extend(m),
                            other => return Err(YamlError::Merge(other.describe())),
                        }
                    }
                    continue;
                }
                let key = resolve(k, version)?;
                if version == ClientVersion::Iot0_22 && explicit.iter().any(|(e, _)| *e == key) {
                    // ruamel refuses duplicate keys; PyYAML keeps the last one.
                    return Err(YamlError::DuplicateKey(key.describe()));
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
