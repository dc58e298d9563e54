//! `run --bless`: measured numbers become the scenarios' pins.
//!
//! `run --bless`: the numbers a run measured become the scenarios' pins, as `cargo insta review`
//! accepts a changed snapshot.
//!
//! Input: the [`ScenarioResult`]s of a run. For every check whose numbers differ from its
//! `expect` pins, the pins are rewritten to what the run measured:
//!
//! - each oracle finding (`words_rendered_more_than_once`, `missing_messages`, …) is set to the
//!   measured number; a finding that became 0 is removed from the table (a finding not named is
//!   0), one that became non-zero is added beside the other findings;
//! - `causes` is set to the measured causes in screen order (removed when there are none);
//! - an exact row pin (`prompt_rows = 1`) is set to the measured count (0 included: a named row
//!   count is compared, an unnamed one is not); a bound (`max_blank_run = { at_most = 2 }`) that
//!   does not hold is reported and **not** rewritten — a bound says how much the client may
//!   vary, which one run cannot tell — nor is a row pin at a check that counts no rows (an
//!   exported file);
//! - what `unpinned` names is left alone (not compared, so never changed);
//! - a check reported `FIXED upstream` (its `known_bug` reads 0, see
//!   [`Expectation::fixed_upstream`]) loses its `known_bug` line: it now pins a correct display.
//!
//! Every change is printed first — scenario, check, `file:line` of its `expect`, `old → new` per
//! pin, the check's verdict — then the files are written. Only the `expect` inline table (and a
//! dropped `known_bug`) of the check's step changes: the rest of the file keeps its formatting
//! and comments (`toml_edit`); the table keeps its own spacing unless a pin is added or removed,
//! when it is laid out as `{ key = value, … }`. A check that lives in an included
//! `*.steps.toml` file is rewritten there (a scenario reports included steps at its `include`
//! line, [`CheckResult::line`]; the file holding the check is found by expanding the includes
//! again). Two scenarios that measured different numbers for one shared check leave it alone.
//!
//! A scenario whose run errored ([`ScenarioResult::error`]) is refused: its checks either did
//! not all run or ran on a session the harness could not finish, so none of its pins is
//! rewritten. [`Blessing::settled`] is false when anything was refused or left for a person.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use toml_edit::{DocumentMut, InlineTable, Item, Value};

use super::{CheckResult, ScenarioResult};
use crate::oracle::{Cause, Findings, RowCounts};
use crate::scenario::{named_findings, Expectation, RowPin};

/// Blesses `results` (`run --bless`): the pins of their scenario files become what the runs
/// measured, the report of what was done appended to `out`; true when every pin now holds
/// (nothing refused or left to a person, every file written). Refused while
/// `HERMES_E2E_CLIENT` overrides the scenarios' clients.
pub fn bless_into(results: &[ScenarioResult], out: &mut String) -> bool {
    if let Some(client) = std::env::var_os(crate::client::CLIENT_ENV).filter(|c| !c.is_empty()) {
        let _ = writeln!(
            out,
            "bless: refused: {} is set ({}): the run used that client, not the scenarios' own, \
             so its numbers are not their pins; unset it and run again",
            crate::client::CLIENT_ENV,
            client.to_string_lossy()
        );
        return false;
    }
    let runs: Vec<Run> = results.iter().map(Run::of).collect();
    let blessing = Blessing::plan(&runs);
    blessing.print(out);
    let written = blessing.write(out);
    blessing.settled() && written
}

/// What bless reads of one scenario's run (see [`Run::of`]).
#[derive(Debug, Clone)]
pub(crate) struct Run {
    /// Scenario name.
    pub(crate) scenario: String,
    /// The scenario file.
    pub(crate) file: PathBuf,
    /// The harness error, with the line of its step, if the run errored.
    pub(crate) error: Option<(String, Option<usize>)>,
    /// Every check that ran, in order.
    pub(crate) checks: Vec<Measured>,
}

/// What bless reads of one check's outcome.
#[derive(Debug, Clone)]
pub(crate) struct Measured {
    /// The check's name.
    pub(crate) name: String,
    /// Its pins.
    pub(crate) expected: Expectation,
    /// The findings measured.
    pub(crate) findings: Findings,
    /// The causes of the repeats measured, in screen order.
    pub(crate) causes: Vec<Cause>,
    /// The row counts measured (`None`: the check read an exported file).
    pub(crate) rows: Option<RowCounts>,
    /// The oracle's verdict sentence.
    pub(crate) verdict: String,
    /// [`CheckResult::fixed_upstream`].
    pub(crate) fixed_upstream: Option<String>,
}

impl Run {
    /// What bless reads of `result`.
    pub(crate) fn of(result: &ScenarioResult) -> Run {
        Run {
            scenario: result.scenario.clone(),
            file: result.file.clone(),
            error: result.error.clone().map(|e| (e, result.error_line)),
            checks: result.checks.iter().map(Measured::of).collect(),
        }
    }
}

impl Measured {
    /// What bless reads of `check`.
    pub(crate) fn of(check: &CheckResult) -> Measured {
        Measured {
            name: check.check.at.clone(),
            expected: check.expected.clone(),
            findings: check.check.findings,
            causes: check.check.repeats.iter().map(|r| r.cause).collect(),
            rows: check.row_counts,
            verdict: check.verdict.clone(),
            fixed_upstream: check.fixed_upstream.clone(),
        }
    }
}

/// One pin rewritten: `name: old → new`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PinChange {
    /// The key in `expect` (or `known_bug`).
    pub(crate) name: &'static str,
    /// What the file said (`0` for a finding not named, `[]` for no causes).
    pub(crate) old: String,
    /// What it says after the blessing (`0`, or `(removed)` for `known_bug`).
    pub(crate) new: String,
}

/// A check whose numbers differ from its pins, and what bless does about it.
#[derive(Debug, Clone)]
pub(crate) struct CheckBlessing {
    /// The scenario whose run measured it.
    pub(crate) scenario: String,
    /// The check's name.
    pub(crate) check: String,
    /// The file that holds the check's step (the scenario, or the `*.steps.toml` it includes),
    /// as a path from the scenario file's (`..` resolved).
    pub(crate) file: PathBuf,
    /// 1-based line of the check's `expect` in [`CheckBlessing::file`].
    pub(crate) line: usize,
    /// The pins rewritten, in table order.
    pub(crate) changes: Vec<PinChange>,
    /// The differences not rewritten, each with why (a bound that does not hold, …).
    pub(crate) left: Vec<String>,
    /// The check's verdict sentence.
    pub(crate) verdict: String,
    /// The check's `known_bug` when it reads fixed.
    pub(crate) fixed_upstream: Option<String>,
    /// Where the check's step is: the file (canonical) and its index among the file's `[[step]]`s.
    site: (PathBuf, usize),
    /// What to write.
    edit: Edit,
}

/// A scenario bless does not touch, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refused {
    /// The scenario.
    pub(crate) scenario: String,
    /// Why.
    pub(crate) reason: String,
}

/// The rewrites of one `expect` table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Edit {
    /// Findings to set (0: remove the key).
    findings: Vec<(&'static str, usize)>,
    /// Causes to set (empty: remove the key); `None`: unchanged.
    causes: Option<Vec<Cause>>,
    /// Exact row pins to set.
    rows: Vec<(&'static str, usize)>,
    /// Remove the step's `known_bug`.
    drop_known_bug: bool,
    /// Write the causes in the compact form (`{ display = 11 }`).
    causes_counted: bool,
    /// Add a `known_bug` line with this text (a pin became non-zero on a check that named no
    /// known bug: [`UNEXPLAINED`]).
    add_known_bug: Option<String>,
}

impl Edit {
    fn is_empty(&self) -> bool {
        *self == Edit::default()
    }
}

/// The plan of a `--bless` run: the checks rewritten, the scenarios refused, and the edited
/// files, not yet written.
#[derive(Debug)]
pub(crate) struct Blessing {
    /// Every check whose numbers differ from its pins.
    pub(crate) checks: Vec<CheckBlessing>,
    /// The scenarios refused.
    pub(crate) refused: Vec<Refused>,
    /// The edited documents by canonical path, with the path shown.
    files: BTreeMap<PathBuf, (PathBuf, DocumentMut)>,
}

impl Blessing {
    /// Plans the blessing of `runs`: reads the scenario files (and what they include), decides
    /// every rewrite and applies it to the documents in memory.
    pub(crate) fn plan(runs: &[Run]) -> Blessing {
        let mut blessing = Blessing {
            checks: Vec::new(),
            refused: Vec::new(),
            files: BTreeMap::new(),
        };
        for run in runs {
            match blessing.plan_run(run) {
                Ok(checks) => blessing.checks.extend(checks),
                Err(reason) => blessing.refused.push(Refused {
                    scenario: run.scenario.clone(),
                    reason: crate::chain::one_line(&reason),
                }),
            }
        }
        blessing.resolve_shared();
        blessing.apply();
        blessing
    }

    /// The checks of `run` whose numbers differ from their pins, each with its site and edit.
    fn plan_run(&mut self, run: &Run) -> Result<Vec<CheckBlessing>, BlessError> {
        if let Some((error, line)) = &run.error {
            let at = line
                .map(|l| format!(" at {}:{l}", run.file.display()))
                .unwrap_or_default();
            let first = error.lines().next().unwrap_or_default().to_owned();
            return Err(BlessError::Errored { at, first });
        }
        let planned: Vec<(usize, Edit, Vec<PinChange>, Vec<String>)> = run
            .checks
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let (edit, changes, left) = rewrite(&m.expected, m);
                (i, edit, changes, left)
            })
            .filter(|(_, edit, _, left)| !edit.is_empty() || !left.is_empty())
            .collect();
        if planned.is_empty() {
            return Ok(Vec::new());
        }
        let sites = self.sites(&run.file)?;
        let names: Vec<&str> = sites.iter().map(|s| s.name.as_str()).collect();
        let ran: Vec<&str> = run.checks.iter().map(|c| c.name.as_str()).collect();
        if names != ran {
            return Err(BlessError::ChecksChanged {
                ran: format!("{ran:?}"),
                names: format!("{names:?}"),
            });
        }
        let mut out = Vec::new();
        for (index, edit, changes, left) in planned {
            let (m, site) = (&run.checks[index], &sites[index]);
            out.push(CheckBlessing {
                scenario: run.scenario.clone(),
                check: m.name.clone(),
                file: site.shown.clone(),
                line: site.line,
                changes,
                left,
                verdict: m.verdict.clone(),
                fixed_upstream: m.fixed_upstream.clone(),
                site: (site.file.clone(), site.step),
                edit,
            });
        }
        Ok(out)
    }

    /// The check steps of the scenario file `file`, in run order, includes expanded as
    /// `crate::scenario` does; the documents read are kept for the edits.
    fn sites(&mut self, file: &Path) -> Result<Vec<Site>, BlessError> {
        let steps = self.steps_of(file)?;
        let mut sites = Vec::new();
        for (index, step) in steps.iter().enumerate() {
            let Some(include) = &step.include else {
                if let Some(name) = &step.check {
                    sites.push(Site::new(file, index, name, step.line));
                }
                continue;
            };
            let included = file.parent().unwrap_or(Path::new(".")).join(&include.0);
            let inner = self.steps_of(&included)?;
            let [from, to] = include.1.unwrap_or([1, inner.len()]);
            if from == 0 || from > to || to > inner.len() {
                return Err(BlessError::NoSteps {
                    file: included,
                    from,
                    to,
                });
            }
            for (i, step) in inner.iter().enumerate().take(to).skip(from - 1) {
                if let Some(name) = &step.check {
                    sites.push(Site::new(&included, i, name, step.line));
                }
            }
        }
        Ok(sites)
    }

    /// The `[[step]]` tables of `file` as bless needs them; the document is kept for the edits.
    fn steps_of(&mut self, file: &Path) -> Result<Vec<StepTable>, BlessError> {
        let text = std::fs::read_to_string(file).map_err(|source| BlessError::Read {
            file: file.to_owned(),
            source,
        })?;
        let parsed =
            toml_edit::Document::parse(text.clone()).map_err(|source| BlessError::Parse {
                file: file.to_owned(),
                source,
            })?;
        let steps = step_tables(&parsed, &text);
        let key = canonical(file);
        self.files
            .entry(key)
            .or_insert_with(|| (normalised(file), parsed.into_mut()));
        Ok(steps)
    }

    /// Two scenarios that measured different numbers for one shared check (a `*.steps.toml`
    /// both include) leave it alone: each reports the clash instead of a rewrite.
    fn resolve_shared(&mut self) {
        let mut edits: BTreeMap<(PathBuf, usize), Vec<usize>> = BTreeMap::new();
        for (i, c) in self.checks.iter().enumerate() {
            edits.entry(c.site.clone()).or_default().push(i);
        }
        for indexes in edits.values().filter(|v| v.len() > 1) {
            let first = &self.checks[indexes[0]].edit;
            if indexes.iter().all(|&i| self.checks[i].edit == *first) {
                continue;
            }
            let scenarios: Vec<String> = indexes
                .iter()
                .map(|&i| self.checks[i].scenario.clone())
                .collect();
            for &i in indexes {
                let c = &mut self.checks[i];
                c.left.push(format!(
                    "not rewritten: the check is shared by {}, whose runs measured different \
                     numbers; pin it by hand",
                    scenarios.join(", ")
                ));
                c.changes.clear();
                c.edit = Edit::default();
            }
        }
    }

    /// Applies every edit to its document in memory; an `expect` that is not an inline table is
    /// left to a person.
    fn apply(&mut self) {
        for c in &mut self.checks {
            if c.edit.is_empty() {
                continue;
            }
            let Some((_, doc)) = self.files.get_mut(&c.site.0) else {
                continue;
            };
            if let Err(why) = apply_edit(doc, c.site.1, &c.edit) {
                c.left.push(format!("not rewritten: {why}"));
                c.changes.clear();
                c.edit = Edit::default();
            }
        }
    }

    /// Whether every pin holds once the files are written: nothing refused, nothing left.
    pub(crate) fn settled(&self) -> bool {
        self.refused.is_empty() && self.checks.iter().all(|c| c.left.is_empty())
    }

    /// The files to write: the path shown, their new text, and how many checks each rewrites.
    pub(crate) fn rewritten(&self) -> Vec<(PathBuf, String, usize)> {
        let mut touched: BTreeMap<&PathBuf, usize> = BTreeMap::new();
        for c in self.checks.iter().filter(|c| !c.edit.is_empty()) {
            *touched.entry(&c.site.0).or_default() += 1;
        }
        touched
            .into_iter()
            .filter_map(|(key, n)| self.files.get(key).map(|f| (f, n)))
            .map(|((shown, doc), n)| (shown.clone(), doc.to_string(), n))
            .collect()
    }

    /// Prints every change, every pin left to a person and every refusal, scenario by scenario.
    pub(crate) fn print(&self, out: &mut String) {
        let mut scenario = None;
        for c in &self.checks {
            if scenario != Some(&c.scenario) {
                let _ = writeln!(out, "bless {}", c.scenario);
                scenario = Some(&c.scenario);
            }
            let _ = writeln!(
                out,
                "  check `{}` ({}:{})",
                c.check,
                c.file.display(),
                c.line
            );
            for p in &c.changes {
                let _ = writeln!(out, "    {}: {} → {}", p.name, p.old, p.new);
            }
            for l in &c.left {
                let _ = writeln!(out, "    left: {l}");
            }
            if let Some(bug) = &c.fixed_upstream {
                let _ = writeln!(out, "    FIXED upstream: {bug}");
            }
            let _ = writeln!(out, "    got: {}", c.verdict);
        }
        for r in &self.refused {
            let _ = writeln!(out, "bless {}: refused: {}", r.scenario, r.reason);
        }
    }

    /// Writes the edited files and says so; false when one could not be written.
    pub(crate) fn write(&self, out: &mut String) -> bool {
        let mut ok = true;
        let rewritten = self.rewritten();
        for (path, text, checks) in &rewritten {
            match std::fs::write(path, text) {
                Ok(()) => {
                    let _ = writeln!(
                        out,
                        "bless: wrote {} ({checks} check{})",
                        path.display(),
                        if *checks == 1 { "" } else { "s" }
                    );
                }
                Err(e) => {
                    ok = false;
                    let _ = writeln!(out, "bless: cannot write {}: {e}", path.display());
                }
            }
        }
        let unexplained = self
            .checks
            .iter()
            .filter(|c| c.edit.add_known_bug.is_some())
            .count();
        if unexplained > 0 {
            let _ = writeln!(
                out,
                "bless: {unexplained} check(s) now pin a non-zero number with no known bug: each \
                 got `known_bug = \"TODO: …\"`; replace it with the client defect the numbers \
                 pin (and the upstream issue), or fix the scenario"
            );
        }
        let rewritten_checks = self.checks.iter().filter(|c| !c.edit.is_empty()).count();
        let left: usize = self.checks.iter().map(|c| c.left.len()).sum();
        let _ = writeln!(
            out,
            "bless: {rewritten_checks} check(s) rewritten in {} file(s), {left} difference(s) \
             left to edit by hand, {} scenario(s) refused",
            rewritten.len(),
            self.refused.len()
        );
        ok
    }
}

/// Where a check step is written.
struct Site {
    /// The file holding the step (canonical: the key of [`Blessing::files`]).
    file: PathBuf,
    /// The file as shown.
    shown: PathBuf,
    /// The step's index among the file's `[[step]]`s.
    step: usize,
    /// The check's name.
    name: String,
    /// 1-based line of its `expect` (of its `[[step]]` header when it has none).
    line: usize,
}

impl Site {
    fn new(file: &Path, step: usize, name: &str, line: usize) -> Site {
        Site {
            file: canonical(file),
            shown: normalised(file),
            step,
            name: name.to_owned(),
            line,
        }
    }
}

/// What bless reads of one `[[step]]` table.
struct StepTable {
    /// `include` and its `steps = [FROM, TO]`.
    include: Option<(String, Option<[usize; 2]>)>,
    /// The check's name, for a `check` step.
    check: Option<String>,
    /// 1-based line of its `expect`, else of its header.
    line: usize,
}

/// The `[[step]]` tables of a parsed file.
fn step_tables(doc: &toml_edit::Document<String>, text: &str) -> Vec<StepTable> {
    let line_at = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
    let Some(steps) = doc.get("step").and_then(Item::as_array_of_tables) else {
        return Vec::new();
    };
    steps
        .iter()
        .map(|t| {
            let include = t.get("include").and_then(Item::as_str).map(|path| {
                let range = t.get("steps").and_then(Item::as_array).and_then(|a| {
                    let n: Vec<usize> = a
                        .iter()
                        .filter_map(|v| v.as_integer().and_then(|n| usize::try_from(n).ok()))
                        .collect();
                    (n.len() == 2).then(|| [n[0], n[1]])
                });
                (path.to_owned(), range)
            });
            let span = t
                .key("expect")
                .and_then(|k| k.span())
                .or_else(|| t.span())
                .map_or(0, |s| s.start);
            StepTable {
                include,
                check: t.get("check").and_then(Item::as_str).map(str::to_owned),
                line: line_at(span),
            }
        })
        .collect()
}

/// The pins of `expected` rewritten to what `m` measured: the edit, the changes as printed, and
/// the differences left to a person.
fn rewrite(expected: &Expectation, m: &Measured) -> (Edit, Vec<PinChange>, Vec<String>) {
    let mut edit = Edit::default();
    let mut changes = Vec::new();
    let mut left = Vec::new();
    let compared = |name: &str| !expected.unpinned.contains(&name);
    let pairs = named_findings(&expected.findings)
        .into_iter()
        .zip(named_findings(&m.findings));
    for ((name, want), (_, got)) in pairs {
        if want != got && compared(name) {
            edit.findings.push((name, got));
            changes.push(PinChange {
                name,
                old: want.to_string(),
                new: got.to_string(),
            });
        }
    }
    if !expected.causes_hold(&m.causes) && compared("causes") {
        // The compact form where order says nothing (one cause throughout) or the file has it.
        let uniform = m.causes.windows(2).all(|w| w[0] == w[1]);
        edit.causes_counted = uniform || expected.causes_counted;
        changes.push(PinChange {
            name: "causes",
            old: causes_text(&expected.causes, expected.causes_counted),
            new: causes_text(&m.causes, edit.causes_counted),
        });
        edit.causes = Some(m.causes.clone());
    }
    let counted: [Option<usize>; 4] = match &m.rows {
        Some(rows) => rows.named().map(|(_, n)| Some(n)),
        None => [None; 4],
    };
    let pins = [
        ("stale_preview_rows", expected.rows.stale_preview_rows),
        ("prompt_rows", expected.rows.prompt_rows),
        ("max_blank_run", expected.rows.max_blank_run),
        ("questions_not_once", expected.rows.questions_not_once),
    ];
    for ((name, want), got) in pins.into_iter().zip(counted) {
        match (want, got) {
            (Some(want), Some(got)) if want.holds(got) => {}
            (Some(RowPin::Exactly(n)), Some(got)) => {
                edit.rows.push((name, got));
                changes.push(PinChange {
                    name,
                    old: n.to_string(),
                    new: got.to_string(),
                });
            }
            (Some(RowPin::AtMost { at_most }), Some(got)) => left.push(format!(
                "{name}: `{{ at_most = {at_most} }}` does not hold, got {got} — a bound is not \
                 rewritten (one run cannot say how far the count varies): raise it or pin the \
                 count by hand"
            )),
            (Some(want), None) => left.push(format!(
                "{name}: pinned {want}, but this check counts no rows (no terminal history): \
                 remove the pin by hand"
            )),
            (None, _) => {}
        }
    }
    // A finding that was 0 and is not any more, on a check that names no known bug: the
    // numbers now pin a defect nobody has named.
    let became_non_zero = edit.findings.iter().any(|&(name, got)| {
        got > 0
            && named_findings(&expected.findings)
                .iter()
                .any(|&(n, want)| n == name && want == 0)
    });
    if became_non_zero && expected.known_bug.is_none() {
        edit.add_known_bug = Some(UNEXPLAINED.to_owned());
        changes.push(PinChange {
            name: "known_bug",
            old: "(none)".into(),
            new: format!("{UNEXPLAINED:?}"),
        });
    }
    if let (Some(_), Some(bug)) = (&m.fixed_upstream, &expected.known_bug) {
        edit.drop_known_bug = true;
        changes.push(PinChange {
            name: "known_bug",
            old: format!("{bug:?}"),
            new: "(removed)".into(),
        });
    }
    (edit, changes, left)
}

/// The `known_bug` bless writes beside a check whose pins became non-zero: a placeholder a
/// person replaces with the defect the numbers pin (the verdict quotes it, and `bless` says how
/// many it wrote).
pub(crate) const UNEXPLAINED: &str =
    "TODO: name the client defect these numbers pin, with its upstream reference";

/// Causes as `bless` prints them: the list (`["display", "data"]`) or the compact form
/// (`{ display = 11 }`).
fn causes_text(causes: &[Cause], counted: bool) -> String {
    if !counted || causes.is_empty() {
        return format!("{:?}", causes.iter().map(|c| c.name()).collect::<Vec<_>>());
    }
    let counts: Vec<String> = Cause::ALL
        .iter()
        .map(|c| (c, causes.iter().filter(|x| *x == c).count()))
        .filter(|(_, n)| *n > 0)
        .map(|(c, n)| format!("{} = {n}", c.name()))
        .collect();
    format!("{{ {} }}", counts.join(", "))
}

/// The order of the keys of an `expect` table: a pin bless adds goes after the last key that
/// comes before it here.
const ORDER: [&str;
    2 + crate::oracle::Findings::NAMES.len() + crate::oracle::RowCounts::NAMES.len()] =
    crate::oracle::joined_names(&[
        &["unpinned"],
        &crate::oracle::Findings::NAMES,
        &["causes"],
        &crate::oracle::RowCounts::NAMES,
    ]);

/// Why a scenario's pins are not rewritten.
#[derive(Debug, thiserror::Error)]
enum BlessError {
    /// The run stopped before its verdict.
    #[error(
        "the run errored{at} ({first}): its checks did not all run as the scenario says, so no \
         pin is rewritten; fix the error and run again"
    )]
    Errored { at: String, first: String },
    /// The file's checks are not the ones the run ran.
    #[error(
        "its checks are not the ones the run ran ({ran}; the file now has {names}): the file \
         changed since; run again"
    )]
    ChecksChanged { ran: String, names: String },
    /// An include names steps the included file no longer has.
    #[error("`{}` has no steps {from} to {to}: the file changed since; run again", file.display())]
    NoSteps {
        file: PathBuf,
        from: usize,
        to: usize,
    },
    /// A scenario file could not be read.
    #[error("cannot read `{}`", file.display())]
    Read {
        file: PathBuf,
        source: std::io::Error,
    },
    /// A scenario file is not TOML.
    #[error("cannot parse `{}`", file.display())]
    Parse {
        file: PathBuf,
        source: toml_edit::TomlError,
    },
    /// The check's step is gone from the file.
    #[error("the step is gone from the file")]
    StepGone,
    /// The check's `expect` is not an inline table.
    #[error("its `expect` is not an inline table `{{ … }}`")]
    NotInline,
}

/// Applies `edit` to the `step`-th `[[step]]` of `doc`.
fn apply_edit(doc: &mut DocumentMut, step: usize, edit: &Edit) -> Result<(), BlessError> {
    let table = doc
        .get_mut("step")
        .and_then(Item::as_array_of_tables_mut)
        .and_then(|steps| steps.get_mut(step))
        .ok_or(BlessError::StepGone)?;
    let expect = table
        .get_mut("expect")
        .and_then(Item::as_inline_table_mut)
        .ok_or(BlessError::NotInline)?;
    edit_expect(expect, edit);
    if edit.drop_known_bug {
        table.remove("known_bug");
    }
    if let Some(bug) = &edit.add_known_bug {
        table.insert("known_bug", toml_edit::value(bug.as_str()));
    }
    Ok(())
}

/// Applies `edit` to an `expect = { … }` table: values replaced in place keep their spacing; when
/// a key is added or removed the table is laid out anew, new keys in [`ORDER`].
fn edit_expect(t: &mut InlineTable, edit: &Edit) {
    let before: Vec<String> = t.iter().map(|(k, _)| k.to_owned()).collect();
    let int = |n: usize| Value::from(i64::try_from(n).unwrap_or(i64::MAX));
    for &(name, n) in &edit.findings {
        if n == 0 {
            t.remove(name);
        } else {
            set(t, name, int(n));
        }
    }
    if let Some(causes) = &edit.causes {
        if causes.is_empty() {
            t.remove("causes");
        } else if edit.causes_counted {
            let mut counts = InlineTable::new();
            for c in Cause::ALL {
                let n = causes.iter().filter(|&&x| x == c).count();
                if n > 0 {
                    counts.insert(c.name(), int(n));
                }
            }
            counts.fmt();
            set(t, "causes", Value::InlineTable(counts));
        } else {
            let array: toml_edit::Array = causes.iter().map(|c| c.name()).collect();
            set(t, "causes", Value::Array(array));
        }
    }
    for &(name, n) in &edit.rows {
        set(t, name, int(n));
    }
    let after: Vec<String> = t.iter().map(|(k, _)| k.to_owned()).collect();
    if after == before {
        return;
    }
    // The kept keys in their order, each new one after the last kept key ranked before it.
    let rank = |k: &str| ORDER.iter().position(|o| *o == k).unwrap_or(ORDER.len());
    let mut order: Vec<String> = before.into_iter().filter(|k| after.contains(k)).collect();
    let mut added: Vec<&String> = after.iter().filter(|k| !order.contains(k)).collect();
    added.sort_by_key(|k| rank(k));
    for k in added {
        let at = order
            .iter()
            .rposition(|o| rank(o) < rank(k))
            .map_or(0, |i| i + 1);
        order.insert(at, k.clone());
    }
    let position = |k: &toml_edit::Key| order.iter().position(|o| o == k.get());
    t.sort_values_by(|k1, _, k2, _| position(k1).cmp(&position(k2)));
    t.fmt();
}

/// Sets `name` to `value`, keeping the spacing of the value it replaces.
fn set(t: &mut InlineTable, name: &str, mut value: Value) {
    match t.get_mut(name) {
        Some(old) => {
            *value.decor_mut() = old.decor().clone();
            *old = value;
        }
        None => {
            t.insert(name, value);
        }
    }
}

/// `path` with `.` and `..` resolved lexically (`scenarios/compress/../conversations/x` →
/// `scenarios/conversations/x`), as shown to people.
fn normalised(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !matches!(
                    out.components().next_back(),
                    None | Some(Component::ParentDir)
                ) {
                    out.pop();
                } else {
                    out.push("..");
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// `path` made canonical (symbolic links and `..` resolved), so two scenarios that include one
/// file through different paths edit one document; the path as given when it cannot be.
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| normalised(path))
}

#[cfg(test)]
mod tests;
