//! Unit tests of provisioning and configuration.

use super::*;

#[test]
fn unknown_spec_is_a_clear_error() {
    // Only meaningful when the override is not set in the test environment.
    if std::env::var_os(CLIENT_ENV).is_some() {
        return;
    }
    let err = resolve("hermes-agent-xyz==1.0").unwrap_err().to_string();
    assert!(
        err.contains("hermes-agent-xyz==1.0") && err.contains("expected"),
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
