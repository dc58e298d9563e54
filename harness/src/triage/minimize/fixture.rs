//! The minimized case as a `record`-style fixture.
//!
//! The minimized case as a `record`-style fixture (as `hermes-e2e record` writes one, see
//! [`crate::runner::record()`]): `state.db` (the minimized database), `resume.cast` and
//! `slash-resume.cast` (the real client's terminal on the final verdict's `--resume` and `/resume`
//! paths), `expect.toml` (what the `--resume` path showed) and a `PROVENANCE.md` saying which client, from which database and by which command it
//! was made, what each path showed, and how to reproduce the verdict with and without a client.
//!
//! Written to `--fixture DIR` (default `OUT/fixture`), so one command makes the fixture:
//! `hermes-e2e minimize STATE_DB --fixture fixtures/NAME`.

use std::fmt::Write as _;
use std::path::Path;

use super::{Error, Outcome};

/// The casts of the final verdict, by the display path they recorded.
const CASTS: [(&str, &str); 2] = [
    ("path-1.cast", "resume.cast"),
    ("path-2.cast", "slash-resume.cast"),
];

/// Writes the fixture of `outcome` into `outcome.fixture`; `repro_args` are the options the final
/// verdict ran with (` --client …`).
pub(crate) fn write(outcome: &Outcome, repro_args: &str) -> Result<(), Error> {
    let dest = &outcome.fixture;
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| Error::Io { path, source }
    };
    std::fs::create_dir_all(dest).map_err(io(dest))?;
    crate::store::snapshot_database(&outcome.minimized, &dest.join("state.db"))?;
    let mut files = vec!["PROVENANCE.md".to_owned(), "state.db".to_owned()];
    for (from, to) in CASTS {
        let from = outcome.result.kept.join(from);
        if from.is_file() {
            std::fs::copy(&from, dest.join(to)).map_err(io(&from))?;
            files.push(to.to_owned());
        }
    }
    if let Some(resumed) = outcome.result.checks.first() {
        let path = dest.join("expect.toml");
        std::fs::write(&path, crate::runner::record::expect_toml(&resumed.check))
            .map_err(io(&path))?;
        files.push("expect.toml".to_owned());
    }
    files.sort();
    let path = dest.join("PROVENANCE.md");
    std::fs::write(&path, provenance(outcome, repro_args, &files)).map_err(io(&path))
}

/// The `PROVENANCE.md` of the fixture.
fn provenance(o: &Outcome, repro_args: &str, files: &[String]) -> String {
    let dest = o.fixture.display();
    let name = o
        .fixture
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut p = String::new();
    let _ = writeln!(p, "# fixtures/{name}\n");
    let _ = writeln!(p, "- Client: `{}` (classic CLI).", o.result.client);
    let _ = writeln!(
        p,
        "- Minimized by `hermes-e2e minimize {} --session {} --signature {}{repro_args} \
         --fixture {dest}` (hermes-e2e {}): {}.",
        o.db.display(),
        o.session,
        o.matching.name(),
        env!("CARGO_PKG_VERSION"),
        o.summary()
    );
    let _ = writeln!(p, "- Signature kept: `{}`.", o.signature);
    let _ = writeln!(
        p,
        "- Config: the harness's offline config (fake model on 127.0.0.1) as `repro` writes it; \
         `state.db` resumed (session `{}`) through `--resume` (`resume.cast`) and `/resume` \
         (`slash-resume.cast`).",
        o.session
    );
    let _ = writeln!(p, "- Files: {}.", files.join(", "));
    p.push_str(&crate::runner::record::what_it_shows(&o.result));
    let _ = writeln!(
        p,
        "- Reproduce the verdict without a client: `hermes-e2e check --cast {dest}/resume.cast \
         --db {dest}/state.db --session {}`; with `--expect {dest}/expect.toml` it exits 0.",
        o.session
    );
    let _ = writeln!(
        p,
        "- Reproduce it on the real client: `hermes-e2e repro {dest}/state.db --session {}{repro_args}`.",
        o.session
    );
    p
}
