//! Stage `html`: a browsable report of a run (`--report DIR`).
//!
//! Input: [`ScenarioResult`]s. Output, under `DIR`: `index.html` (every scenario and check with its
//! verdict), and per scenario a folder with one page per check — the captured screen, history
//! included, with each surplus rendering's lines highlighted (`<mark class="repeat surplus">`),
//! the renderings it repeats marked apart (`<mark class="repeat allowed">`), each linked to
//! the stored rows that hold it, the rows themselves (from the run's `state.db`), the missing
//! messages — plus copies of the asciicast v2 recordings (`asciinema play session-1.cast`) and of
//! the fake model's log.
//!
//! Highlighting is per line: a line is marked when its history row lies in one of the row ranges
//! the oracle reports for a repeat's surplus or allowed renderings. The page carries a small script that sums up what
//! is highlighted (`data-highlighted-words`, `data-highlighted-repeats` on `<body>`), so a test in
//! a real browser can check what a person would see.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::runner::{CheckResult, ScenarioResult};
use crate::store::Store;

/// Characters of stored content shown per row.
const ROW_PREVIEW: usize = 400;

/// Writes the report of `results` into `dir` (created if needed) and returns the index page.
pub fn write_report(dir: &Path, results: &[ScenarioResult]) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let mut index = page_head("hermes-e2e report");
    index.push_str("<h1>hermes-e2e report</h1>\n<ul class=\"scenarios\">\n");
    for result in results {
        let folder = slug(&result.scenario);
        let sdir = dir.join(&folder);
        std::fs::create_dir_all(&sdir)?;
        let kept = copy_artefacts(&result.kept, &sdir)?;
        let _ = writeln!(
            index,
            "<li class=\"{}\"><b>{}</b> {} <span class=\"client\">[{}]</span>",
            if result.passed { "ok" } else { "fail" },
            if result.passed { "ok" } else { "FAIL" },
            esc(&result.scenario),
            esc(&result.client)
        );
        if let Some(e) = &result.error {
            let _ = writeln!(index, "<pre class=\"error\">{}</pre>", esc(e));
        }
        index.push_str("<ul>\n");
        for (n, check) in result.checks.iter().enumerate() {
            let file = format!("check-{}-{}.html", n + 1, slug(&check.check.at));
            std::fs::write(sdir.join(&file), check_page(result, check, &kept))?;
            let _ = writeln!(
                index,
                "<li><a href=\"{folder}/{file}\">{}</a>: {}</li>",
                esc(&check.check.at),
                esc(&check.verdict)
            );
        }
        index.push_str("</ul>\n");
        if !kept.is_empty() {
            let links: Vec<String> = kept
                .iter()
                .map(|k| format!("<a href=\"{folder}/{k}\">{}</a>", esc(k)))
                .collect();
            let _ = writeln!(index, "<p class=\"kept\">kept: {}</p>", links.join(", "));
        }
        index.push_str("</li>\n");
    }
    index.push_str("</ul>\n</body>\n</html>\n");
    let path = dir.join("index.html");
    std::fs::write(&path, index)?;
    Ok(path)
}

/// Copies the recordings and the provider log of a run into `to`; returns their names.
fn copy_artefacts(kept: &Path, to: &Path) -> std::io::Result<Vec<String>> {
    let mut names = Vec::new();
    let Ok(entries) = std::fs::read_dir(kept) else {
        return Ok(names);
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if p.is_file() && (name.ends_with(".cast") || name == "provider.jsonl") {
            std::fs::copy(&p, to.join(&name))?;
            names.push(name);
        }
    }
    Ok(names)
}

/// One check's page.
fn check_page(result: &ScenarioResult, check: &CheckResult, kept: &[String]) -> String {
    let c = &check.check;
    let mut o = page_head(&format!("{} — {}", result.scenario, c.at));
    let _ = writeln!(
        o,
        "<p><a href=\"../index.html\">index</a></p>\n<h1>{} — {}</h1>\n<p class=\"verdict {}\">{}</p>",
        esc(&result.scenario),
        esc(&c.at),
        if check.mismatches.is_empty() { "ok" } else { "fail" },
        esc(&check.verdict)
    );
    for m in &check.mismatches {
        let _ = writeln!(o, "<p class=\"mismatch\">{}</p>", esc(m));
    }
    let f = &c.findings;
    let _ = writeln!(
        o,
        "<table class=\"findings\"><tr><th>words rendered more than once</th><td>{}</td></tr>\
         <tr><th>missing messages</th><td>{}</td></tr><tr><th>internal text shown</th><td>{}</td></tr>\
         <tr><th>out of order</th><td>{}</td></tr></table>",
        f.words_rendered_more_than_once, f.missing_messages, f.internal_text_shown, f.out_of_order
    );
    let _ = writeln!(
        o,
        "<p>session <code>{}</code>: {} stored rows, {} logical messages. Recordings: {}</p>",
        esc(&check.session),
        check.stored_rows,
        check.logical_messages,
        kept.iter()
            .map(|k| format!("<a href=\"{k}\">{}</a>", esc(k)))
            .collect::<Vec<_>>()
            .join(", ")
    );

    if !c.repeats.is_empty() {
        o.push_str("<h2>Repeats</h2>\n<ol class=\"repeats\">\n");
        for (k, r) in c.repeats.iter().enumerate() {
            let rows: Vec<String> = r
                .rows
                .iter()
                .map(|id| format!("<a href=\"#row-{id}\">row {id}</a>"))
                .collect();
            let link = |&(a, b): &(usize, usize)| {
                format!("<a href=\"#line-{a}\">history rows {a}–{b}</a>")
            };
            let allowed: Vec<String> = r.allowed_rows.iter().map(link).collect();
            let _ = writeln!(
                o,
                "<li id=\"repeat-{k}\">{} words “{}”: surplus rendering at {} ({}); allowed \
                 rendering{} at {}; rendered {}× in all, cause <b>{:?}</b>; stored in {}; \
                 message_uid {}</li>",
                r.words,
                esc(&r.excerpt),
                link(&r.surplus_rows),
                esc(&crate::oracle::diagnosis(r)),
                if r.allowed_rows.len() == 1 { "" } else { "s" },
                if allowed.is_empty() {
                    "none".to_string()
                } else {
                    allowed.join(", ")
                },
                r.times,
                r.cause,
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

    // The screen, history included.
    o.push_str(
        "<h2>Rendered history</h2>\n<p class=\"legend\"><mark class=\"surplus\">surplus \
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
                    line.row
                );
            }
            (None, Some(k)) => {
                let _ = writeln!(
                    o,
                    "<span id=\"line-{}\"><mark class=\"repeat allowed\" data-repeat=\"{k}\" \
                     title=\"allowed rendering (not counted)\">{text}</mark></span>",
                    line.row
                );
            }
            (None, None) => {
                let _ = writeln!(o, "<span id=\"line-{}\">{text}</span>", line.row);
            }
        }
    }
    o.push_str("</pre>\n");
    o.push_str(SUMMARY_SCRIPT);
    o.push_str("</body>\n</html>\n");
    o
}

/// The rows `ids` of `session`'s lineage in `db` (a private copy is read), as an HTML table.
fn rows_table(db: &Path, session: &str, ids: &[i64]) -> String {
    let rows = Store::open(db).and_then(|store| {
        let lineage: Vec<String> = store.lineage(session)?.into_iter().map(|s| s.id).collect();
        store.rows(&lineage)
    });
    let rows = match rows {
        Ok(rows) => rows,
        Err(e) => return format!("<p class=\"error\">{}</p>\n", esc(&e.to_string())),
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

fn page_head(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n\
         <style>\nbody {{ font-family: sans-serif; margin: 1em 2em; }}\n\
         pre.screen {{ background: #111; color: #ddd; padding: 1em; line-height: 1.25; }}\n\
         mark.surplus {{ background: #dc322f; color: #fff; }}\n\
         mark.allowed {{ background: #b58900; color: #000; }}\n\
         .fail {{ color: #b00; }} .ok {{ color: #070; }}\n\
         table {{ border-collapse: collapse; }} td, th {{ border: 1px solid #ccc; padding: 2px 6px; \
         vertical-align: top; }}\n\
         table.rows pre {{ white-space: pre-wrap; margin: 0; max-width: 60em; }}\n</style>\n</head>\n<body>\n",
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

/// A file-name-safe slug.
fn slug(text: &str) -> String {
    let s: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    let s = s.trim_matches('_').to_string();
    if s.is_empty() {
        "check".into()
    } else {
        s
    }
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
        assert_eq!(slug("after --resume"), "after___resume");
        assert_eq!(slug("///"), "check");
    }
}
