//! One scenario side by side: the harness (`runner::run`) against a plain tmux driver with fixed
//! sleeps doing the same steps — the same client, the same fake model and script, the same
//! config, terminal size and working directory (both from [`hermes_e2e::runner::prepare`]).
//!
//! `cargo bench -p hermes-e2e --bench tmux_fixed_sleep [-- --runs N] [-- SCENARIO]`
//! (default: 3 runs of `scenarios/compress/rotating_resume.toml`, alternating the two drivers).
//! It prints each run's wall time, the medians and their ratio (issue 15: ≤ 0.5).
//!
//! The tmux driver is what a person scripting the client would write: `send-keys` the text, a
//! short pause, Enter, then sleep long enough for the step on a loaded machine. The sleeps
//! ([`Sleeps`]; override with `HERMES_E2E_TMUX_SLEEPS=launch,type,turn,command,quit` in
//! milliseconds) are the longest client time of each step measured by `run --json` on the 2-core
//! machine under load, rounded up with room for a slower start: a fixed-sleep driver has to
//! cover the slow case every time. A tmux run counts only if it did the whole job: every turn
//! answered by the fake model, the compaction summary requested, and the last reply on the
//! resumed client's screen (captured with `capture-pane`); otherwise it is reported invalid.
//!
//! The tmux server runs on a private socket (`-L hermes-e2e-bench-PID`) and is killed at the end
//! of each run, so no client outlives the benchmark.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use hermes_e2e::runner::{self, RunOptions};
use hermes_e2e::scenario::{Action, Scenario};
use hermes_e2e::store::Store;
use hermes_e2e::testing::driver::squash;
use hermes_e2e::testing::provider::CallKind;

/// The fixed sleeps of the tmux driver.
#[derive(Debug, Clone, Copy)]
struct Sleeps {
    /// After starting the client (`hermes`, `hermes --resume ID`). Measured by `run --json`:
    /// 1.1–1.9 s unloaded, 3.2 s at load average 4 (the reference notes: up to 6.5 s for a
    /// first start with other work on the CPUs).
    launch: Duration,
    /// Between the typed text and Enter (the client's paste window is 50 ms).
    typing: Duration,
    /// After Enter on a turn. Measured: 0.3–0.5 s of client time, 1.2–2.5 s for the first
    /// (the agent is initialised on the first message).
    turn: Duration,
    /// After Enter on `/compress`. Measured: 0.2–0.8 s.
    command: Duration,
    /// After Enter on `/quit`. Measured: 0.7–0.8 s.
    quit: Duration,
}

impl Default for Sleeps {
    fn default() -> Sleeps {
        Sleeps {
            launch: Duration::from_millis(4000),
            typing: Duration::from_millis(200),
            turn: Duration::from_millis(1500),
            command: Duration::from_millis(1500),
            quit: Duration::from_millis(1500),
        }
    }
}

impl Sleeps {
    /// The defaults, or `HERMES_E2E_TMUX_SLEEPS=launch,type,turn,command,quit` (milliseconds).
    fn from_env() -> Result<Sleeps, String> {
        let Ok(spec) = std::env::var("HERMES_E2E_TMUX_SLEEPS") else {
            return Ok(Sleeps::default());
        };
        let ms: Vec<u64> = spec
            .split(',')
            .map(|v| v.trim().parse::<u64>())
            .collect::<Result<_, _>>()
            .map_err(|e| format!("HERMES_E2E_TMUX_SLEEPS=`{spec}`: {e}"))?;
        let [launch, typing, turn, command, quit] = ms[..] else {
            return Err(format!(
                "HERMES_E2E_TMUX_SLEEPS=`{spec}`: expected five milliseconds: launch,type,turn,command,quit"
            ));
        };
        let d = Duration::from_millis;
        Ok(Sleeps {
            launch: d(launch),
            typing: d(typing),
            turn: d(turn),
            command: d(command),
            quit: d(quit),
        })
    }
}

/// A tmux server on a private socket, killed (with every client in it) when dropped.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn new() -> Tmux {
        Tmux {
            socket: format!("hermes-e2e-bench-{}", std::process::id()),
        }
    }

    /// Runs `tmux -L SOCKET ARGS…` and returns its stdout.
    fn run(&self, args: &[&str]) -> Result<String, String> {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .map_err(|e| format!("cannot run tmux: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "tmux {args:?}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Types `text` into the session `target`, pauses, presses Enter.
    fn line(&self, target: &str, text: &str, sleeps: &Sleeps) -> Result<(), String> {
        self.run(&["send-keys", "-t", target, "-l", text])?;
        std::thread::sleep(sleeps.typing);
        self.run(&["send-keys", "-t", target, "Enter"]).map(drop)
    }

    /// Whether the session `target` (its client) is still there.
    fn has(&self, target: &str) -> bool {
        self.run(&["has-session", "-t", target]).is_ok()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

/// What one tmux run did.
struct TmuxRun {
    wall: Duration,
    /// Why the run does not count (`None`: it did the whole job).
    invalid: Option<String>,
}

/// Drives `scenario`'s steps in tmux with fixed sleeps, in the fresh run directory `dir`. A run
/// whose sleeps were too short (a client still running when the next one starts, no session to
/// resume yet) is returned as invalid, with its reason.
fn tmux_run(scenario: &Scenario, dir: &Path, sleeps: &Sleeps) -> Result<TmuxRun, String> {
    let p = runner::prepare(scenario, dir, &scenario.client).map_err(|e| e.to_string())?;
    let tmux = Tmux::new();
    let mut last_capture = String::new();
    let mut last_reply = String::new();
    let mut target = String::new();
    let start = Instant::now();
    let invalid = |why: String| TmuxRun {
        wall: start.elapsed(),
        invalid: Some(why),
    };
    for step in &scenario.steps {
        match &step.action {
            Action::Launch {
                args, client: None, ..
            } => {
                if !target.is_empty() && tmux.has(&target) {
                    return Ok(invalid("the client had not exited in /quit's sleep".into()));
                }
                let args = match substitute_session(args, &p.home) {
                    Ok(args) => args,
                    Err(why) => return Ok(invalid(why)),
                };
                target = format!("hermes-{}", step.line);
                let mut cmd = vec![
                    "new-session".to_owned(),
                    "-d".into(),
                    "-s".into(),
                    target.clone(),
                    "-x".into(),
                    scenario.cols.to_string(),
                    "-y".into(),
                    scenario.rows.to_string(),
                    "-c".into(),
                    p.work.to_string_lossy().into_owned(),
                    "env".into(),
                    "-i".into(),
                ];
                cmd.extend(p.env.iter().map(|(k, v)| format!("{k}={v}")));
                cmd.push(p.client.executable.to_string_lossy().into_owned());
                cmd.extend(args);
                tmux.run(&cmd.iter().map(String::as_str).collect::<Vec<_>>())?;
                std::thread::sleep(sleeps.launch);
            }
            Action::Say { text, reply, .. } => {
                tmux.line(&target, text, sleeps)?;
                std::thread::sleep(sleeps.turn);
                last_reply = reply.clone();
            }
            Action::Command { text, .. } => {
                tmux.line(&target, text, sleeps)?;
                std::thread::sleep(sleeps.command);
            }
            Action::Quit => {
                tmux.line(&target, "/quit", sleeps)?;
                std::thread::sleep(sleeps.quit);
            }
            Action::Check { .. } => {
                last_capture = tmux.run(&["capture-pane", "-p", "-J", "-S", "-", "-t", &target])?;
            }
            other => return Err(format!("the tmux driver has no `{other:?}` step")),
        }
    }
    let wall = start.elapsed();
    drop(tmux);
    let log = p.provider.log();
    let turns = scenario
        .steps
        .iter()
        .filter(|s| matches!(s.action, Action::Say { .. }))
        .count();
    let chats = log.iter().filter(|e| e.kind == CallKind::Chat).count();
    let summaries = log.iter().filter(|e| e.kind == CallKind::Summary).count();
    let tail: String = {
        let s = squash(&last_reply);
        s.chars()
            .skip(s.chars().count().saturating_sub(40))
            .collect()
    };
    let invalid = if chats < turns {
        Some(format!("{chats} of {turns} turns reached the fake model"))
    } else if summaries == 0 {
        Some("no compaction summary was requested".to_owned())
    } else if !squash(&last_capture).contains(&tail) {
        Some("the last reply is not on the resumed client's screen".to_owned())
    } else {
        None
    };
    Ok(TmuxRun { wall, invalid })
}

/// Replaces `{session}` with the newest session of `home/state.db` that holds messages.
fn substitute_session(args: &[String], home: &Path) -> Result<Vec<String>, String> {
    if !args.iter().any(|a| a.contains("{session}")) {
        return Ok(args.to_vec());
    }
    let store = Store::open(&home.join("state.db")).map_err(|e| e.to_string())?;
    let session = store
        .latest_session_with_messages()
        .map_err(|e| e.to_string())?
        .ok_or("no session with messages to resume yet")?;
    Ok(args
        .iter()
        .map(|a| a.replace("{session}", &session.id))
        .collect())
}

/// The machine's load averages (1, 5, 15 minutes), as `/proc/loadavg` has them.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_owned())
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    match xs.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => xs[n / 2],
        n => (xs[n / 2 - 1] + xs[n / 2]) / 2.0,
    }
}

/// `--runs N` and a scenario path from the arguments (cargo passes `--bench`, ignored).
fn arguments(root: &Path) -> Result<(usize, PathBuf), String> {
    let mut runs = 3;
    let mut path = root.join("scenarios/compress/rotating_resume.toml");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--runs" => {
                let v = args.next().unwrap_or_default();
                runs = v
                    .parse()
                    .map_err(|_| format!("--runs: expected a number, got `{v}`"))?;
            }
            "--bench" => {}
            other if other.ends_with(".toml") => path = PathBuf::from(other),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok((runs, path))
}

fn main() -> Result<(), String> {
    let root = runner::workspace_root();
    let (runs, path) = arguments(&root)?;
    let sleeps = Sleeps::from_env()?;
    let scenario = Scenario::load(&path, &root.join("scenarios")).map_err(|e| e.to_string())?;
    let out = root.join("target/hermes-e2e/bench-tmux");
    let options = RunOptions {
        out_root: out.join("harness"),
        ..RunOptions::default()
    };
    println!(
        "{} — {runs} runs each, tmux sleeps {sleeps:?}; load average {}",
        scenario.name,
        load_average()
    );
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for n in 1..=runs {
        let result = runner::run(&scenario, &options);
        let verdict = if result.passed { "passed" } else { "FAILED" };
        println!(
            "run {n}: harness {:.2} s ({verdict}, client {:.2} s)",
            result.wall_secs, result.client_secs
        );
        ours.push(result.wall_secs);
        let t = tmux_run(&scenario, &out.join("tmux"), &sleeps)?;
        match &t.invalid {
            None => theirs.push(t.wall.as_secs_f64()),
            Some(why) => println!("run {n}: tmux run INVALID: {why}"),
        }
        println!("run {n}: tmux    {:.2} s", t.wall.as_secs_f64());
    }
    let (a, b) = (median(ours), median(theirs));
    println!("load average at the end: {}", load_average());
    println!(
        "median: harness {a:.2} s, tmux fixed sleeps {b:.2} s, ratio {:.2}",
        a / b
    );
    Ok(())
}
