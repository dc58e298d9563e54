//! Finding scenario files (`*.toml` below the given paths) and naming them by their path.

use super::*;

/// A scenario's name: its path below `root` without extension (`compress/rotating_resume`). A file
/// outside `root` is named by its file stem (`probe` for `/tmp/x/probe.toml`; [`unique_names`]
/// adds a suffix where two collide): the name is joined to the output directory, so its
/// artefacts go to `OUT/probe/`, never to an absolute path or out of the directory. Both paths
/// are compared canonical where they exist, so `./scenarios/a/b.toml` is below `scenarios`.
pub(super) fn scenario_name(path: &Path, root: &Path) -> String {
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned());
    let inside = path
        .strip_prefix(root)
        .ok()
        .map(Path::to_owned)
        .or_else(|| {
            canonical(path)
                .strip_prefix(canonical(root))
                .ok()
                .map(Path::to_owned)
        });
    let relative = match inside {
        Some(relative) => relative.with_extension(""),
        None => PathBuf::from(path.file_stem().unwrap_or_default()),
    };
    let name = relative
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(part) => Some(part.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/");
    if name.is_empty() {
        "scenario".to_owned()
    } else {
        name
    }
}

/// Makes the names of scenarios run together unique: the second and later of a name (two
/// files outside `scenarios/` with one stem) get `-2`, `-3`, … in the order given.
pub fn unique_names(scenarios: &mut [Scenario]) {
    let mut taken = std::collections::BTreeSet::new();
    for s in scenarios.iter_mut() {
        let mut name = s.name.clone();
        let mut n = 1;
        while !taken.insert(name.clone()) {
            n += 1;
            name = format!("{}-{n}", s.name);
        }
        s.name = name;
    }
}

/// Finds scenario files: each path is a file or a directory searched recursively for `*.toml`.
/// A directory with no scenario is an error (a typo must not pass as "0 scenarios, all green").
pub fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ScenarioError> {
    let mut found = Vec::new();
    for path in paths {
        if path.is_dir() {
            let before = found.len();
            walk(path, &mut found).map_err(|source| ScenarioError::Io {
                path: path.clone(),
                source,
            })?;
            if found.len() == before {
                return Err(ScenarioError::NoScenarios { path: path.clone() });
            }
        } else if path.exists() {
            found.push(path.clone());
        } else {
            return Err(ScenarioError::Io {
                path: path.clone(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            });
        }
    }
    found.sort();
    found.dedup();
    Ok(found)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.path());
    for entry in entries {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "toml")
            && !path.to_string_lossy().ends_with(".steps.toml")
        {
            // `*.steps.toml` files hold shared steps for `include`, not scenarios.
            out.push(path);
        }
    }
    Ok(())
}
