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
pub fn markdown(outcome: &Outcome) -> String {
    let mut md = String::new();
    let o = outcome;
    let _ = writeln!(md, "# Minimized: `{}`\n", o.db.display());
    let _ = writeln!(md, "- Session resumed: `{}`", o.session);
    let _ = writeln!(md, "- Signature of the original: `{}`", o.signature);
    let _ = writeln!(
        md,
        "- A candidate was kept when {} (`--signature {}`), on two runs of the real client.",
        match o.matching {
            Matching::Same => "its verdict had the same signature",
            Matching::AnyRepeat => "some check showed words rendered more than once",
        },
        o.matching.name()
    );
    let _ = writeln!(
        md,
        "- Rows: {} → {}; sessions: {} → {}",
        o.rows_before, o.rows_after, o.sessions_before, o.sessions_after
    );
    let _ = writeln!(
        md,
        "- Trials: {} of at most {} ({} client runs in all, the original's and the final one \
         included; {}); {:.0} s",
        o.trials.len(),
        o.max_trials,
        o.runs,
        if o.spent {
            "the budget ran out: a larger `--max-trials` may shrink it further"
        } else {
            "every unit was tried"
        },
        o.wall_secs
    );
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
    rows_table(&mut md, o);
    trials_table(&mut md, o);
    let _ = writeln!(
        md,
        "\n## Not done by this version\n\n\
         - Every trial runs the real client (no fast offline tier judges candidates first).\n\
         - Sessions of the lineage are never removed, even when empty; texts are not shortened.\n\
         - `sessions.message_count` follows the rows removed; other counts \
         (`tool_call_count`, tokens) are left as they were."
    );
    md
}

fn rows_table(md: &mut String, o: &Outcome) {
    let _ = writeln!(md, "## Rows kept (the resumed session's lineage)\n");
    let _ = writeln!(
        md,
        "| row | session | role | kind | state | excerpt | why kept |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|");
    for r in &o.kept {
        let _ = writeln!(
            md,
            "| {} | `{}` | {} | {} | {} | {} | {} |",
            r.id,
            r.session_id,
            r.role,
            r.kind,
            r.state,
            cell(&r.excerpt),
            cell(&r.why.join("; "))
        );
    }
}

fn trials_table(md: &mut String, o: &Outcome) {
    let _ = writeln!(md, "\n## Trials\n");
    let _ = writeln!(md, "| # | phase | removed | rows | runs | outcome |");
    let _ = writeln!(md, "|---|---|---|---|---|---|");
    for t in &o.trials {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} → {} | {} | {} |",
            t.number,
            t.phase.name(),
            cell(&t.removed),
            t.rows_before,
            t.rows_after,
            t.runs,
            cell(&t.verdict.text())
        );
    }
}
