//! A minimization's `REPORT.md`.
//!
//! `DIR/REPORT.md` of a minimization: the signature, rows and sessions before and after, the rows
//! kept with their role and why, every trial, and the command that reproduces the result.

use std::fmt::Write as _;

use super::{Matching, Outcome};

/// A table cell: one line, `|` escaped, control characters made visible.
fn cell(text: &str) -> String {
    crate::report::printable(text)
        .replace('\n', " ")
        .replace('|', "\\|")
}

/// The report of `outcome`, in Markdown.
pub(crate) fn markdown(outcome: &Outcome) -> String {
    let mut md = String::new();
    let o = outcome;
    let _ = writeln!(md, "# Minimized: `{}`\n", o.db.display());
    let _ = writeln!(md, "- Session resumed: `{}`", o.session);
    let _ = writeln!(md, "- Signature of the original: `{}`", o.signature);
    if let Some(s) = &o.offline_signature {
        let _ = writeln!(
            md,
            "- Offline signature of the original (the fast tier's): `{s}`"
        );
    }
    let _ = writeln!(
        md,
        "- A candidate was kept when {} (`--signature {}`): {}",
        match o.matching {
            Matching::Same => "its verdict had the same signature",
            Matching::AnyRepeat => "some check showed words rendered more than once",
        },
        o.matching.name(),
        match &o.offline_absent {
            None => format!(
                "judged first offline (the client's display read), confirmed by two runs of the \
                 real client every {} steps and at the end",
                super::CONFIRM_EVERY
            ),
            Some(why) => format!("on two runs of the real client (no offline tier: {why})"),
        }
    );
    let _ = writeln!(
        md,
        "- Rows: {} → {}; sessions: {} → {}; characters of text: {} → {}",
        o.rows_before,
        o.rows_after,
        o.sessions_before,
        o.sessions_after,
        o.chars_before,
        o.chars_after
    );
    let stop = match (o.spent, o.timed_out) {
        (_, true) => format!(
            "`--timeout {}` ran out: stopped with the best confirmed database",
            o.timeout_secs.unwrap_or_default()
        ),
        (true, false) => "the budget ran out: a larger `--max-trials` may shrink it further".into(),
        (false, false) => "every unit was tried".into(),
    };
    let _ = writeln!(
        md,
        "- Trials: {} of at most {}: {} offline, {} on the real client in the PTY ({} client runs \
         in all, the original's and the final one included); {stop}; {:.0} s",
        o.trials.len(),
        o.max_trials,
        o.offline_trials(),
        o.pty_trials(),
        o.runs,
        o.wall_secs
    );
    if o.offline_trials() > 0 {
        let _ = writeln!(
            md,
            "- Offline reads: {:.2} s in all, {:.0} ms each on average",
            o.offline_secs,
            1000.0 * o.offline_secs / o.offline_trials() as f64
        );
    }
    let same = o.matching.matches(&o.signature, &o.final_signature);
    let _ = writeln!(
        md,
        "- The final run on `minimized.db`: `{}`{}",
        o.final_signature,
        if same {
            ""
        } else {
            " — NOT the signature looked for: the client is not deterministic on this case"
        }
    );
    let _ = writeln!(
        md,
        "- The input file was only read (its content compared before and after: unchanged)."
    );
    let _ = writeln!(md, "\nReproduce:\n\n```\n{}\n```\n", o.command);
    let _ = writeln!(
        md,
        "Fixture (`record`-style: `state.db`, the casts, `PROVENANCE.md`): `{}`; to make it a \
         fixture of the repository in one command, rerun with `--fixture fixtures/NAME`.\n",
        o.fixture.display()
    );
    rows_table(&mut md, o);
    trials_table(&mut md, o);
    let _ = writeln!(
        md,
        "\n## Not done by this version\n\n\
         - Sessions of the lineage are never removed, even when empty.\n\
         - `sessions.message_count` follows the rows removed; other counts \
         (`tool_call_count`, tokens) are left as they were."
    );
    md
}

/// A Markdown table: the header row, the rule, one line per row (cells escaped by [`cell`]).
fn table(md: &mut String, header: &[&str], rows: impl Iterator<Item = Vec<String>>) {
    let _ = writeln!(md, "| {} |", header.join(" | "));
    let _ = writeln!(md, "|{}", "---|".repeat(header.len()));
    for row in rows {
        let cells: Vec<String> = row.iter().map(|c| cell(c)).collect();
        let _ = writeln!(md, "| {} |", cells.join(" | "));
    }
}

fn rows_table(md: &mut String, o: &Outcome) {
    let _ = writeln!(md, "## Rows kept (the resumed session's lineage)\n");
    let header = [
        "row", "session", "role", "kind", "state", "excerpt", "why kept",
    ];
    let rows = o.kept.iter().map(|r| {
        vec![
            r.id.to_string(),
            format!("`{}`", r.session_id),
            r.role.clone(),
            r.kind.clone(),
            r.state.clone(),
            r.excerpt.clone(),
            r.why.join("; "),
        ]
    });
    table(md, &header, rows);
}

fn trials_table(md: &mut String, o: &Outcome) {
    let _ = writeln!(md, "\n## Trials\n");
    let header = [
        "#",
        "phase",
        "removed",
        "rows",
        "offline",
        "client runs",
        "outcome",
    ];
    let rows = o.trials.iter().map(|t| {
        vec![
            t.number.to_string(),
            t.phase.name().to_owned(),
            t.removed.clone(),
            format!("{} → {}", t.rows_before, t.rows_after),
            if t.offline { "yes" } else { "no" }.to_owned(),
            t.runs.to_string(),
            t.verdict.text(),
        ]
    });
    table(md, &header, rows);
}
