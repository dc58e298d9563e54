//! `report::html`: a browsable report of a run (`--report DIR`).
//!
//! Input: [`ScenarioResult`]s. Output, under `DIR`:
//! - `index.html`, which triages the run: the failing checks first, each with its one-line verdict
//!   and a picture of its screen, then every scenario with pass/fail, client and durations;
//!   `failures.html` is the same page with the failing scenarios only (a filter that needs no
//!   script);
//! - per scenario a folder with, per check, a page (`check-N-<name>.html`) and a picture of the
//!   screen at the checkpoint (`check-N-<name>.svg`, `svg`); copies of the asciicast recordings
//!   and of the fake model's log;
//! - `asciinema-player/`: the vendored asciinema player (`assets`), so every page works from
//!   `file://` with no network access.
//!
//! A check page shows, top to bottom: the verdict; **expected beside shown** — every logical
//! message of the display model beside the history rows that draw it, with each finding marked in
//! its own colour and labelled in words (surplus and allowed renderings, missing messages,
//! internal text shown, messages out of order, messages the user took back shown), the summary numbers being the sums of those marks
//! (`Counted`); the picture; the recording in the player (embedded in the page, as browsers do
//! not let a `file://` page fetch a file), with a marker at the check; the repeats with their
//! diagnosis; the stored rows involved (from the run's `state.db`); and the rendered history with
//! each surplus rendering's lines highlighted (`<mark class="repeat surplus">`), the renderings it
//! repeats marked apart (`<mark class="repeat allowed">`).
//!
//! Everything but the player works without JavaScript. The page's scripts only count what is
//! marked, for a test in a real browser: `data-highlighted-words`, `data-highlighted-repeats`,
//! `data-highlighted-lines` (the rendered history) and `data-counted-surplus-words`,
//! `data-counted-missing`, `data-counted-internal-words`, `data-counted-out-of-order`,
//! `data-counted-taken-back` (the side-by-side view) on `<body>`.

pub(crate) mod assets;
mod side;
pub(crate) mod text_svg;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::display::{self, Expected, Surface};
use crate::oracle::{wording, Check};
use crate::runner::{slug, CheckResult, ScenarioResult};
use crate::store::Store;

pub(crate) use side::Counted;

/// Characters of stored content shown per row.
const ROW_PREVIEW: usize = 400;

/// Terminal size (rows, columns) assumed for the picture when no recording says it.
const DEFAULT_SIZE: (usize, usize) = (40, 100);

/// One check as the index lists it.
struct Listed {
    scenario: String,
    at: String,
    page: String,
    picture: String,
    verdict: String,
    failed: bool,
}

/// Writes the report of `results` into `dir` (created if needed) and returns the index page.
pub fn write_report(dir: &Path, results: &[ScenarioResult]) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    assets::write_player(dir)?;
    let mut listed: Vec<Listed> = Vec::new();
    let mut scenarios: Vec<(String, Vec<String>)> = Vec::new(); // (folder, kept)
    for result in results {
        let folder = slug(&result.scenario, "check");
        let sdir = dir.join(&folder);
        std::fs::create_dir_all(&sdir)?;
        let kept = copy_artefacts(result, &sdir)?;
        for (n, check) in result.checks.iter().enumerate() {
            let stem = format!("check-{}-{}", n + 1, slug(&check.check.at, "check"));
            let own = recording_of(result, n, &kept);
            let (rows, cols) = own
                .as_ref()
                .map(|(name, _)| name)
                .into_iter()
                .chain(kept.iter().filter(|k| k.ends_with(".cast")))
                .find_map(|k| cast_size(&sdir.join(k)))
                .unwrap_or(DEFAULT_SIZE);
            // The terminal itself at the checkpoint (colours kept) when the run has it; else the
            // last screenful of the transcript's text.
            let picture = check.screen_svg.clone().unwrap_or_else(|| {
                text_svg::last_screen(
                    &check.transcript,
                    rows,
                    cols,
                    &format!(
                        "{} — {}: the screen at the checkpoint",
                        result.scenario, check.check.at
                    ),
                )
            });
            std::fs::write(sdir.join(format!("{stem}.svg")), picture)?;
            let page = check_page(result, n, &kept, &sdir, &stem);
            std::fs::write(sdir.join(format!("{stem}.html")), page)?;
            listed.push(Listed {
                scenario: result.scenario.clone(),
                at: check.check.at.clone(),
                page: format!("{folder}/{stem}.html"),
                picture: format!("{folder}/{stem}.svg"),
                verdict: check.verdict.clone(),
                failed: !check.mismatches.is_empty(),
            });
        }
        scenarios.push((folder, kept));
    }
    let path = dir.join("index.html");
    std::fs::write(&path, index_page(results, &scenarios, &listed, false))?;
    std::fs::write(
        dir.join("failures.html"),
        index_page(results, &scenarios, &listed, true),
    )?;
    Ok(path)
}

/// The index (`failures_only`: the failing scenarios only).
fn index_page(
    results: &[ScenarioResult],
    scenarios: &[(String, Vec<String>)],
    listed: &[Listed],
    failures_only: bool,
) -> String {
    let failed = results.iter().filter(|r| !r.passed).count();
    let mut o = page_head(if failures_only {
        "hermes-e2e report: failures"
    } else {
        "hermes-e2e report"
    });
    let wall: f64 = results.iter().map(|r| r.wall_secs).sum();
    let _ = writeln!(
        o,
        "<h1>hermes-e2e report{}</h1>\n<p class=\"tally\"><b class=\"{}\">{} of {} scenario{} \
         failed</b> · {} check{} · {:.1} s of scenario time</p>\n<p class=\"filter\">show: {} · {}</p>",
        if failures_only { ": failures" } else { "" },
        if failed > 0 { "fail" } else { "ok" },
        failed,
        results.len(),
        if results.len() == 1 { "" } else { "s" },
        listed.len(),
        if listed.len() == 1 { "" } else { "s" },
        wall,
        if failures_only {
            "<a href=\"index.html\">all scenarios</a>"
        } else {
            "<b>all scenarios</b>"
        },
        if failures_only {
            "<b>failures only</b>"
        } else {
            "<a href=\"failures.html\">failures only</a>"
        }
    );
    o.push_str(&failing_and_errors(results, listed));
    o.push_str(
        "<h2>Scenarios</h2>\n<table class=\"scenarios\"><thead><tr><th>result</th><th>scenario</th>\
         <th>client</th><th>wall</th><th>client time</th><th>checks</th><th>kept</th></tr></thead>\n<tbody>\n",
    );
    o.push_str(&scenario_rows(results, scenarios, listed, failures_only));
    o.push_str("</tbody></table>\n</body>\n</html>\n");
    o
}

/// The index's lists of the failing checks and of the harness errors (empty when there are none).
fn failing_and_errors(results: &[ScenarioResult], listed: &[Listed]) -> String {
    let mut o = String::new();
    let failing: Vec<&Listed> = listed.iter().filter(|l| l.failed).collect();
    if !failing.is_empty() {
        o.push_str("<h2>Failing checks</h2>\n<ol class=\"failing\">\n");
        for l in &failing {
            let _ = writeln!(
                o,
                "<li class=\"fail\"><a href=\"{}\"><b>{}</b> — {}</a>: {} \
                 <a class=\"picture\" href=\"{}\">[screen]</a></li>",
                l.page,
                esc(&l.scenario),
                esc(&l.at),
                esc(&l.verdict),
                l.picture
            );
        }
        o.push_str("</ol>\n");
    }
    let errors: Vec<&ScenarioResult> = results.iter().filter(|r| r.error.is_some()).collect();
    if !errors.is_empty() {
        o.push_str("<h2>Harness errors</h2>\n<ul class=\"errors\">\n");
        for r in errors {
            let _ = writeln!(
                o,
                "<li class=\"fail\"><b>{}</b><pre class=\"error\">{}</pre></li>",
                esc(&r.scenario),
                esc(r.error.as_deref().unwrap_or_default())
            );
        }
        o.push_str("</ul>\n");
    }
    o
}

/// The index's table rows, one per scenario (`failures_only`: the failing ones).
fn scenario_rows(
    results: &[ScenarioResult],
    scenarios: &[(String, Vec<String>)],
    listed: &[Listed],
    failures_only: bool,
) -> String {
    let mut o = String::new();
    // Failing scenarios first, each group in run order.
    let mut order: Vec<(&ScenarioResult, &(String, Vec<String>))> =
        results.iter().zip(scenarios).collect();
    order.sort_by_key(|(r, _)| r.passed);
    for (result, (folder, kept)) in order {
        if failures_only && result.passed {
            continue;
        }
        let checks: Vec<String> = listed
            .iter()
            .filter(|l| l.scenario == result.scenario)
            .map(|l| {
                format!(
                    "<a class=\"{}\" href=\"{}\">{}</a> (<a href=\"{}\">screen</a>)",
                    if l.failed { "fail" } else { "ok" },
                    l.page,
                    esc(&l.at),
                    l.picture
                )
            })
            .collect();
        let links: Vec<String> = kept
            .iter()
            .map(|k| format!("<a href=\"{folder}/{k}\">{}</a>", esc(k)))
            .collect();
        let _ = writeln!(
            o,
            "<tr class=\"{}\"><td><b>{}</b></td><td>{}</td><td class=\"client\">{}</td>\
             <td>{:.1} s</td><td>{:.1} s</td><td>{}</td><td class=\"kept\">{}</td></tr>",
            if result.passed { "ok" } else { "fail" },
            if result.passed { "ok" } else { "FAIL" },
            esc(&result.scenario),
            esc(&result.client),
            result.wall_secs,
            result.client_secs,
            checks.join("<br>"),
            links.join(", ")
        );
    }
    o
}

/// Copies the recordings and the provider log of a run into `to`; returns their names.
fn copy_artefacts(result: &ScenarioResult, to: &Path) -> std::io::Result<Vec<String>> {
    let mut names = Vec::new();
    let Ok(files) = result.kept_files() else {
        return Ok(names);
    };
    for (p, name) in files {
        if name.ends_with(".cast") || name == "provider.jsonl" {
            std::fs::copy(&p, to.join(&name))?;
            names.push(name);
        }
    }
    Ok(names)
}

/// The terminal size (rows, columns) in an asciicast header (v2 `height`/`width`, v3 `term`).
fn cast_size(path: &Path) -> Option<(usize, usize)> {
    let text = std::fs::read_to_string(path).ok()?;
    let header: serde_json::Value = serde_json::from_str(text.lines().next()?).ok()?;
    let (rows, cols) = match header.get("term") {
        Some(term) => (term.get("rows")?, term.get("cols")?),
        None => (header.get("height")?, header.get("width")?),
    };
    Some((rows.as_u64()? as usize, cols.as_u64()? as usize))
}

/// The recording of check `n` of `result` among `kept`, and the time of the check in it when the
/// step timings tell: the k-th `launch` before the check's step wrote `session-k.cast`, and the
/// check came after the steps since then; `repro` writes `path-N.cast` for its N-th check; else
/// the only recording there is.
fn recording_of(
    result: &ScenarioResult,
    n: usize,
    kept: &[String],
) -> Option<(String, Option<f64>)> {
    let check = &result.checks[n];
    let launches: Vec<usize> = result
        .steps
        .iter()
        .enumerate()
        .filter(|(_, s)| s.kind == "launch" && s.line < check.line)
        .map(|(i, _)| i)
        .collect();
    if let Some(&from) = launches.last() {
        let name = format!("session-{}.cast", launches.len());
        if kept.contains(&name) {
            let secs: f64 = result.steps[from..]
                .iter()
                .take_while(|s| s.line != check.line)
                .map(|s| s.secs)
                .sum();
            return Some((name, Some(secs)));
        }
    }
    let path = format!("path-{}.cast", n + 1);
    if kept.contains(&path) {
        return Some((path, None));
    }
    let casts: Vec<&String> = kept.iter().filter(|k| k.ends_with(".cast")).collect();
    match casts.as_slice() {
        [only] => Some(((*only).clone(), None)),
        _ => None,
    }
}

/// What the marks of the "expected beside shown" view of check `n` of `result` add up to: the
/// numbers its page shows (they equal the check's findings).
pub fn counted(result: &ScenarioResult, n: usize) -> Counted {
    let check = &result.checks[n];
    let expected = expected_of(result, check);
    side::side_by_side(&check.check, &check.transcript, expected.as_ref()).counted
}

/// The display model of the checked session, from the run's kept `state.db`: the surface whose
/// number of logical messages is the check's (the classic CLI's, or the export's with tool
/// output).
fn expected_of(result: &ScenarioResult, check: &CheckResult) -> Option<Expected> {
    let store = Store::open(&result.kept.join("state.db")).ok()?;
    let mut first = None;
    for surface in [Surface::default(), Surface { tool_output: true }] {
        let Ok(e) = display::expected(&store, &check.session, surface) else {
            continue;
        };
        if e.messages.len() == check.logical_messages {
            return Some(e);
        }
        first.get_or_insert(e);
    }
    first
}

/// The player for the recording `name` (copied into `sdir`), its content embedded in the page,
/// with a marker labelled `label` at `at` seconds (the end of the recording when not known), the
/// poster showing the screen there.
fn player(sdir: &Path, name: &str, at: Option<f64>, label: &str, k: usize) -> String {
    let Ok(text) = std::fs::read_to_string(sdir.join(name)) else {
        return String::new();
    };
    let (rows, cols) = cast_size(&sdir.join(name)).unwrap_or(DEFAULT_SIZE);
    let end = text
        .lines()
        .rev()
        .find_map(|l| {
            serde_json::from_str::<serde_json::Value>(l)
                .ok()?
                .get(0)?
                .as_f64()
        })
        .unwrap_or(0.0);
    let mark = at.unwrap_or(end).min(end);
    // `<` occurs only inside JSON strings, where `\u003c` means the same: no `</script>` inside.
    let data = text.replace('<', "\\u003c");
    let label_js = serde_json::to_string(label)
        .unwrap_or_else(|_| "\"check\"".into())
        .replace('<', "\\u003c");
    format!(
        "<figure class=\"recording\"><figcaption><a href=\"{n}\">{n}</a> ({end:.1} s; marker \
         “{l}” at {mark:.1} s{note})</figcaption>\n\
         <div class=\"player\" id=\"player-{k}\" data-cast=\"{n}\"></div>\n\
         <script type=\"application/json\" id=\"cast-{k}\">{data}</script>\n\
         <script>\nif (window.AsciinemaPlayer) {{\n  AsciinemaPlayer.create(\
         {{ data: document.getElementById('cast-{k}').textContent }}, \
         document.getElementById('player-{k}'), {{ cols: {cols}, rows: {rows}, preload: true, \
         poster: 'npt:{mark:.3}', markers: [[{mark:.3}, {label_js}]], idleTimeLimit: 2, \
         fit: 'width' }});\n  document.getElementById('player-{k}').dataset.created = '1';\n}}\n\
         </script>\n<noscript><p>The player needs JavaScript; or <code>asciinema play {n}</code>.\
         </p></noscript></figure>\n",
        n = esc(name),
        l = esc(label),
        note = if at.is_none() {
            ", the end of the recording"
        } else {
            ""
        },
    )
}

/// One check's page.
fn check_page(
    result: &ScenarioResult,
    n: usize,
    kept: &[String],
    sdir: &Path,
    stem: &str,
) -> String {
    let check = &result.checks[n];
    let c = &check.check;
    let mut o = page_head(&format!("{} — {}", result.scenario, c.at));
    let _ = writeln!(
        o,
        "<link rel=\"stylesheet\" href=\"../{}/{}\">\n<nav><a href=\"../index.html\">index</a> · \
         <a href=\"../failures.html\">failures</a></nav>\n<h1>{} — {}</h1>\n<p class=\"verdict {}\">{}</p>",
        assets::PLAYER_DIR,
        assets::PLAYER_CSS,
        esc(&result.scenario),
        esc(&c.at),
        if check.mismatches.is_empty() {
            "ok"
        } else {
            "fail"
        },
        esc(&check.verdict)
    );
    for m in &check.mismatches {
        let _ = writeln!(o, "<p class=\"mismatch\">{}</p>", esc(m));
    }
    if let Some(note) = &check.terminal_note {
        let _ = writeln!(o, "<p class=\"note\">note: {}</p>", esc(note));
    }
    let _ = writeln!(
        o,
        "<p>session <code>{}</code>: {} stored rows, {} logical messages. Recordings: {}. \
         Picture of the screen: <a href=\"{stem}.svg\">{stem}.svg</a>. Jump to: \
         <a href=\"#side\">expected beside shown</a> · <a href=\"#screen\">screen</a> · \
         <a href=\"#recording\">recording</a> · <a href=\"#history\">rendered history</a></p>",
        esc(&check.session),
        check.stored_rows,
        check.logical_messages,
        kept.iter()
            .map(|k| format!("<a href=\"{k}\">{}</a>", esc(k)))
            .collect::<Vec<_>>()
            .join(", ")
    );

    // Expected beside shown.
    let expected = expected_of(result, check);
    let view = side::side_by_side(c, &check.transcript, expected.as_ref());
    o.push_str(
        "<h2 id=\"side\">Expected beside shown</h2>\n<p class=\"legend\">Left: what a correct \
         display shows, message by message (the display model of the stored rows). Right: the \
         history rows that draw it. Marks: <span class=\"swatch surplus\"></span> SURPLUS \
         rendering (counted) · <span class=\"swatch allowed\"></span> allowed rendering (not \
         counted) · <span class=\"swatch missing\"></span> MISSING · <span class=\"swatch \
         internal\"></span> INTERNAL TEXT SHOWN · <span class=\"swatch order\"></span> OUT OF \
         ORDER · <span class=\"swatch taken-back\"></span> TAKEN BACK, SHOWN. The numbers below are \
         the sums of the marks in the table.</p>\n",
    );
    o.push_str(&view.html);

    // The picture and the recording.
    let _ = writeln!(
        o,
        "<h2 id=\"screen\">The screen at the checkpoint</h2>\n<p><a href=\"{stem}.svg\">\
         <img class=\"picture\" src=\"{stem}.svg\" alt=\"the last screen at {}\"></a></p>",
        esc(&c.at)
    );
    o.push_str(&recordings(result, n, kept, sdir));

    o.push_str(&repeats_and_missing(c));

    o.push_str(&stored_rows(result, check));

    o.push_str(&rendered_history(check));
    o.push_str(SUMMARY_SCRIPT);
    o.push_str(SUMMARY_SCRIPT);
    o.push_str(COUNT_SCRIPT);
    o.push_str("</body>\n</html>\n");
    o
}

/// The check page's lists of the repeats (with their diagnosis) and the missing messages.
fn repeats_and_missing(c: &Check) -> String {
    let mut o = String::new();
    if !c.repeats.is_empty() {
        o.push_str("<h2>Repeats</h2>\n<ol class=\"repeats\">\n");
        for (k, r) in c.repeats.iter().enumerate() {
            let rows: Vec<String> = r
                .rows
                .iter()
                .map(|id| format!("<a href=\"#row-{id}\">row {id}</a>"))
                .collect();
            let link = |rows: &(usize, usize)| {
                format!(
                    "<a href=\"#line-{}\">{}</a>",
                    rows.0 + 1,
                    wording::history_rows(rows)
                )
            };
            let allowed: Vec<String> = r.allowed_rows.iter().map(link).collect();
            let _ = writeln!(
                o,
                "<li id=\"repeat-{k}\">{} words “{}”: surplus rendering at {} ({}); allowed \
                 rendering{} at {}; rendered {} in all, cause <b>{}</b>; stored in {}; \
                 message_uid {}</li>",
                r.words,
                esc(&r.excerpt),
                link(&r.surplus_rows),
                esc(&wording::diagnosis(r)),
                if r.allowed_rows.len() == 1 { "" } else { "s" },
                if allowed.is_empty() {
                    "none".to_string()
                } else {
                    allowed.join(", ")
                },
                wording::times_word(r.times),
                r.cause.title(),
                rows.join(", "),
                esc(&r.message_uids.join(", "))
            );
        }
        o.push_str("</ol>\n");
    }
    if !c.missing.is_empty() {
        o.push_str("<h2>Missing</h2>\n<ul class=\"missing\">\n");
        for m in &c.missing {
            let rows: Vec<String> = m
                .rows
                .iter()
                .map(|id| format!("<a href=\"#row-{id}\">row {id}</a>"))
                .collect();
            let _ = writeln!(
                o,
                "<li>{:?} “{}” ({})</li>",
                m.role,
                esc(&m.excerpt),
                rows.join(", ")
            );
        }
        o.push_str("</ul>\n");
    }
    o
}

/// The check page's table of the stored rows its repeats and missing messages name.
fn stored_rows(result: &ScenarioResult, check: &CheckResult) -> String {
    let c = &check.check;
    let mut o = String::new();
    // The stored rows involved, from the run's database.
    let mut ids: Vec<i64> = c
        .repeats
        .iter()
        .flat_map(|r| r.rows.iter().copied())
        .chain(c.missing.iter().flat_map(|m| m.rows.iter().copied()))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    if !ids.is_empty() {
        o.push_str("<h2>Stored rows</h2>\n");
        o.push_str(&rows_table(
            &result.kept.join("state.db"),
            &check.session,
            &ids,
        ));
    }
    o
}

/// The check page's rendered history, each repeat's surplus and allowed renderings marked.
fn rendered_history(check: &CheckResult) -> String {
    let c = &check.check;
    let mut o = String::new();
    // The screen, history included.
    o.push_str(
        "<h2 id=\"history\">Rendered history</h2>\n<p class=\"legend\"><mark class=\"surplus\">surplus \
         rendering</mark> (counted in the finding) · <mark class=\"allowed\">allowed \
         rendering</mark> (the renderings a correct display draws)</p>\n<pre class=\"screen\">",
    );
    for line in &check.transcript.lines {
        let within = |&(a, b): &(usize, usize)| (a..=b).contains(&line.row);
        // The surplus rendering of a repeat wins over an allowed rendering of another one.
        let surplus = c.repeats.iter().position(|r| within(&r.surplus_rows));
        let allowed = c
            .repeats
            .iter()
            .position(|r| r.allowed_rows.iter().any(within));
        let text = esc(&line.text);
        match (surplus, allowed) {
            (Some(k), _) => {
                let _ = writeln!(
                    o,
                    "<span id=\"line-{}\"><mark class=\"repeat surplus\" data-repeat=\"{k}\" \
                     title=\"surplus rendering (counted)\">{text}</mark></span>",
                    line.row + 1
                );
            }
            (None, Some(k)) => {
                let _ = writeln!(
                    o,
                    "<span id=\"line-{}\"><mark class=\"repeat allowed\" data-repeat=\"{k}\" \
                     title=\"allowed rendering (not counted)\">{text}</mark></span>",
                    line.row + 1
                );
            }
            (None, None) => {
                let _ = writeln!(o, "<span id=\"line-{}\">{text}</span>", line.row + 1);
            }
        }
    }
    o.push_str("</pre>\n");
    o
}

/// The check page's recordings, each in the player (with a marker at the check when known).
fn recordings(result: &ScenarioResult, n: usize, kept: &[String], sdir: &Path) -> String {
    let c = &result.checks[n].check;
    let mut o = String::new();
    let casts: Vec<(String, Option<f64>)> = match recording_of(result, n, kept) {
        Some(x) => vec![x],
        None => kept
            .iter()
            .filter(|k| k.ends_with(".cast"))
            .map(|k| (k.clone(), None))
            .collect(),
    };
    if !casts.is_empty() {
        let _ = writeln!(
            o,
            "<h2 id=\"recording\">Recording</h2>\n<script src=\"../{}/{}\"></script>",
            assets::PLAYER_DIR,
            assets::PLAYER_JS
        );
        for (k, (name, at)) in casts.iter().enumerate() {
            o.push_str(&player(sdir, name, *at, &format!("check: {}", c.at), k));
        }
    }
    o
}

/// The rows `ids` of `session`'s lineage in `db` (a private copy is read), as an HTML table.
fn rows_table(db: &Path, session: &str, ids: &[i64]) -> String {
    let rows = Store::open(db).and_then(|store| store.rows(&store.lineage_ids(session)?));
    let rows = match rows {
        Ok(rows) => rows,
        Err(e) => {
            return format!(
                "<p class=\"error\">{}</p>\n",
                esc(&crate::chain::one_line(&e))
            )
        }
    };
    let mut o = String::from(
        "<table class=\"rows\"><tr><th>id</th><th>session</th><th>role</th><th>active</th>\
         <th>compacted</th><th>message_uid</th><th>content</th></tr>\n",
    );
    for r in rows.iter().filter(|r| ids.contains(&r.id)) {
        let content: String = r
            .content
            .as_deref()
            .unwrap_or("")
            .chars()
            .take(ROW_PREVIEW)
            .collect();
        let _ = writeln!(
            o,
            "<tr id=\"row-{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><pre>{}</pre></td></tr>",
            r.id,
            r.id,
            esc(&r.session_id),
            esc(&r.role),
            u8::from(r.active),
            u8::from(r.compacted),
            esc(r.message_uid.as_deref().unwrap_or("–")),
            esc(&content)
        );
    }
    o.push_str("</table>\n");
    o
}

/// Sums up what is highlighted, for people (a line at the top) and for a browser test (data
/// attributes on `<body>`).
const SUMMARY_SCRIPT: &str = r#"<script>
(function () {
  var marks = document.querySelectorAll('mark.repeat');
  var words = 0, repeats = {};
  marks.forEach(function (m) {
    var w = m.textContent.split(/\s+/).filter(function (x) { return /[\p{L}\p{N}]/u.test(x); });
    words += w.length;
    repeats[m.dataset.repeat] = true;
  });
  document.body.dataset.highlightedWords = String(words);
  document.body.dataset.highlightedRepeats = String(Object.keys(repeats).length);
  document.body.dataset.highlightedLines = String(marks.length);
})();
</script>
"#;

/// Counts the marks of the side-by-side view again in the browser (`data-counted-*` on
/// `<body>`), so a test can check that what a person sees adds up to the verdict.
const COUNT_SCRIPT: &str = r#"<script>
(function () {
  function sum(sel, attr) {
    var n = 0;
    document.querySelectorAll(sel).forEach(function (m) { n += Number(m.getAttribute(attr)); });
    return String(n);
  }
  var b = document.body.dataset;
  b.countedSurplusWords = sum('.mark.surplus', 'data-surplus-words');
  b.countedSurplusMarks = String(document.querySelectorAll('.mark.surplus').length);
  b.countedAllowedMarks = String(document.querySelectorAll('.mark.allowed').length);
  b.countedMissing = sum('.mark.missing', 'data-missing');
  b.countedInternalWords = sum('.mark.internal', 'data-internal-words');
  b.countedOutOfOrder = sum('.mark.order', 'data-out-of-order');
  b.countedTakenBack = sum('.mark.taken-back', 'data-taken-back');
})();
</script>
"#;

/// The page's stylesheet. Every mark has its colour and a label in words.
const STYLE: &str = "
body { font-family: sans-serif; margin: 1em 2em; color: #222; }
nav { font-size: 90%; }
pre.screen { background: #111; color: #ddd; padding: 1em; line-height: 1.25; }
mark.surplus { background: #dc322f; color: #fff; }
mark.allowed { background: #b58900; color: #000; }
.fail { color: #b00; } .ok { color: #070; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: 2px 6px; vertical-align: top; }
table.rows pre { white-space: pre-wrap; margin: 0; max-width: 60em; }
table.findings caption { text-align: left; font-size: 90%; color: #555; }
p.verdict { font-size: 110%; font-weight: bold; }
p.warning { background: #fdf6e3; border-left: 4px solid #cb4b16; padding: 4px 8px; }
table.side { width: 100%; table-layout: fixed; margin-top: .5em; }
table.side th:first-child, table.side td.n { width: 2.5em; text-align: right; color: #777; }
table.side td.expected, table.side td.shown { width: 48%; }
table.side pre { white-space: pre-wrap; word-break: break-word; margin: 2px 0; font-size: 85%; max-height: 14em; overflow: auto; }
table.side pre.snip { background: #111; color: #ddd; padding: 3px 6px; }
table.side .meta { font-size: 80%; color: #555; }
table.side tr.internal td.expected { background: #f6eef6; }
table.side .quiet { color: #888; font-size: 85%; }
.mark { border-left: 6px solid #999; padding: 2px 6px; margin: 3px 0; }
.mark .label { font-weight: bold; font-size: 85%; }
.mark.shown { border-color: #859900; }
.mark.surplus { border-color: #dc322f; background: #fbe3e2; }
.mark.surplus .label { color: #a4120f; }
.mark.allowed { border-color: #b58900; background: #fbf3dc; }
.mark.missing { border-color: #6c71c4; background: #ecebf8; min-height: 2em; }
.mark.missing .label { color: #3d418f; }
.mark.internal { border-color: #d33682; background: #fbe5f0; }
.mark.internal .label { color: #951d57; }
.mark.order { border-color: #2aa198; background: #e1f5f3; }
.mark.order .label { color: #156b64; }
.mark.taken-back { border-color: #cb4b16; background: #fbe9dc; }
.mark.taken-back .label { color: #8a3108; }
table.side tr.taken-back td.expected { background: #fbf0e8; }
tr.has-taken-back td.n { background: #cb4b16; color: #fff; }
tr.has-surplus td.n { background: #dc322f; color: #fff; }
tr.has-missing td.n { background: #6c71c4; color: #fff; }
tr.has-internal td.n { background: #d33682; color: #fff; }
tr.has-order td.n { background: #2aa198; color: #fff; }
.swatch { display: inline-block; width: .9em; height: .9em; vertical-align: middle; border: 1px solid #555; }
.swatch.surplus { background: #dc322f; } .swatch.allowed { background: #b58900; }
.swatch.missing { background: #6c71c4; } .swatch.internal { background: #d33682; }
.swatch.order { background: #2aa198; } .swatch.taken-back { background: #cb4b16; }
table.counted td { text-align: right; } table.counted td:last-child { text-align: left; }
table.counted td[data-count] { font-weight: bold; }
img.picture { max-width: 100%; border: 1px solid #444; }
figure.recording { margin: .5em 0; max-width: 1100px; }
table.scenarios td.kept, td.client { font-size: 85%; }
ol.failing li { margin: 3px 0; }
";

fn page_head(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n\
         <style>{STYLE}</style>\n</head>\n<body>\n",
        esc(title)
    )
}

/// HTML-escapes text (element content and double-quoted attributes). Control characters other
/// than newline and tab are shown escaped (content may hold terminal escape sequences).
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => out.extend(c.escape_unicode()),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup_quotes_and_control_characters() {
        assert_eq!(
            esc("<b>\"x\" & 'y'</b>\u{1b}[2J"),
            "&lt;b&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/b&gt;\\u{1b}[2J"
        );
    }
}
