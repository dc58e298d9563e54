use super::session::on_path;
use super::slug;

#[test]
fn on_path_looks_only_in_the_client_environment() {
    let env = vec![("PATH".to_owned(), "/nonexistent:/bin".to_owned())];
    assert!(on_path(&env, "sh"));
    assert!(!on_path(&env, "hermes-e2e-no-such-program"));
    assert!(!on_path(&[], "sh"), "no PATH, nothing found");
}

#[test]
fn slugs_are_one_safe_path_component() {
    assert_eq!(slug("after --resume", "check"), "after___resume");
    assert_eq!(slug("///", "check"), "check");
    assert_eq!(slug("../x", "session"), "x");
    assert_eq!(slug("..", "session"), "session");
    assert_eq!(
        slug("20261202_183554_6dda8d", "session"),
        "20261202_183554_6dda8d"
    );
}
