//! The `export` step: the client run without a PTY.
//!
//! Running the client without a PTY (`hermes export …`) and reading what it wrote as a
//! transcript, for a scenario's `export` step.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::error::Error;
use crate::terminal::Transcript;

/// Runs the client without a PTY (`hermes ARGS`) in its private environment and returns its
/// stdout; killed (with its process group) at `deadline`. A non-zero exit is an error with the
/// output's tail.
pub(super) fn run_cli(
    program: &Path,
    args: &[String],
    env: &[(String, String)],
    cwd: &Path,
    deadline: Duration,
) -> Result<String, Error> {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let mut child = Command::new(program)
        .args(args)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|source| Error::CliSpawn {
            program: program.to_owned(),
            args: args.to_vec(),
            source,
        })?;
    let _registered = crate::interrupt::register(child.id() as i32);
    // Drain both pipes on threads so a chatty client cannot block on a full pipe.
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut p) = pipe {
                let mut bytes = Vec::new();
                let _ = p.read_to_end(&mut bytes);
                text = String::from_utf8_lossy(&bytes).into_owned();
            }
            text
        })
    };
    let out = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() >= deadline => {
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(child.id() as i32),
                    nix::sys::signal::Signal::SIGKILL,
                );
                let _ = child.wait();
                return Err(Error::CliTimeout {
                    args: args.to_vec(),
                    secs: deadline.as_secs_f64(),
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(source) => {
                return Err(Error::CliWait {
                    args: args.to_vec(),
                    source,
                })
            }
        }
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    if !status.success() {
        let tail: Vec<&str> = stderr
            .lines()
            .chain(stdout.lines())
            .rev()
            .take(15)
            .collect();
        return Err(Error::CliFailed {
            args: args.to_vec(),
            status,
            tail: tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
        });
    }
    Ok(stdout)
}

/// The text an export wrote, as a transcript: every file under `out` (or `out` itself), sorted by
/// path; `.jsonl` files reduced to the `content` strings they hold, in order. Without any file,
/// the command's stdout.
pub(super) fn export_transcript(out: &Path, stdout: &str) -> Result<Transcript, Error> {
    fn files(p: &Path, acc: &mut Vec<PathBuf>) {
        if p.is_file() {
            acc.push(p.to_path_buf());
        } else if let Ok(entries) = std::fs::read_dir(p) {
            for e in entries.flatten() {
                files(&e.path(), acc);
            }
        }
    }
    fn contents(v: &serde_json::Value, acc: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    match (k.as_str(), v) {
                        ("content", serde_json::Value::String(s)) => acc.push(s.clone()),
                        _ => contents(v, acc),
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|i| contents(i, acc)),
            _ => {}
        }
    }
    let mut found = Vec::new();
    files(out, &mut found);
    found.sort();
    // The manifest lists files, not conversation.
    found.retain(|f| {
        !f.file_name()
            .is_some_and(|n| n.to_string_lossy().contains("manifest"))
    });
    let mut text = String::new();
    for f in &found {
        let body = std::fs::read_to_string(f).map_err(|source| Error::Read {
            path: f.clone(),
            source,
        })?;
        if f.extension().is_some_and(|e| e == "jsonl") {
            for line in body.lines().filter(|l| !l.trim().is_empty()) {
                let v: serde_json::Value =
                    serde_json::from_str(line).map_err(|source| Error::NotJsonl {
                        path: f.clone(),
                        source,
                    })?;
                let mut acc = Vec::new();
                contents(&v, &mut acc);
                for c in acc {
                    text.push_str(&c);
                    text.push_str("\n\n");
                }
            }
        } else {
            text.push_str(&body);
            text.push('\n');
        }
    }
    if found.is_empty() {
        text = stdout.to_owned();
    }
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    Ok(Transcript::from_history_lines(&lines))
}
