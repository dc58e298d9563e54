//! The oracle on real recordings and databases from the real client (`fixtures/`), no client needed:
//! replay the `.cast` through the emulator, project `state.db` through the display model, compare.
//! Each fixture's numbers are pinned, and doctored transcripts show that the numbers move with what
//! was drawn (a test that cannot fail proves nothing).

use hermes_e2e::display::{self, Surface};
use hermes_e2e::store::Store;
use hermes_e2e::terminal::{cast, ReflowScreen, Transcript};
use hermes_e2e::{Basis, Cause, Check, Session};

mod common {
    pub mod fixture;
}

use common::fixture::fixture;

fn load(name: &str) -> (Transcript, display::Expected) {
    load_cast(name, "resume.cast")
}

/// A fixture recorded with `hermes-e2e record`: the recording of the resumed client is `cast`.
fn load_cast(name: &str, cast: &str) -> (Transcript, display::Expected) {
    let dir = fixture(name);
    let transcript = cast::replay(&dir.join(cast))
        .expect("fixture recording replays")
        .transcript();
    let store = Store::open(&dir.join("state.db")).expect("fixture database opens");
    let basis = Basis::read(&store, Session::Latest, Surface::default()).expect("projection");
    (transcript, basis.expected)
}

/// The oracle's check of `transcript` against `expected` alone (no data problems).
fn check(transcript: &Transcript, expected: &display::Expected) -> Check {
    Basis::from_expected(expected.clone()).check("fixture", transcript, None)
}

/// The check of fixture `name`'s recording `cast` against its database.
fn check_cast(name: &str, cast: &str) -> Check {
    let (transcript, expected) = load_cast(name, cast);
    check(&transcript, &expected)
}

/// The check of fixture `name`'s resumed client (`session-2.cast`), once its database is
/// asserted to hold `rows_and_messages` (stored rows, logical messages).
fn check_resumed(name: &str, rows_and_messages: (usize, usize)) -> Check {
    let (transcript, expected) = load_cast(name, "session-2.cast");
    assert_eq!(
        (expected.stored_rows, expected.messages.len()),
        rows_and_messages
    );
    check(&transcript, &expected)
}

/// A check's words rendered more than once, messages missing and words of internal text shown.
fn counts(c: &Check) -> (usize, usize, usize) {
    let f = &c.findings;
    (
        f.words_rendered_more_than_once,
        f.missing_messages,
        f.internal_text_shown,
    )
}

#[test]
fn rotating_resume_shows_the_carried_reply_twice() {
    let (transcript, expected) = load("iot-0.22.2.post1-rotating-resume");
    assert_eq!(expected.stored_rows, 18);
    assert_eq!(expected.messages.len(), 12);
    let c = check(&transcript, &expected);
    assert_eq!(counts(&c), (169, 0, 502));
    assert_eq!(c.findings.out_of_order, 0);
    assert_eq!(c.repeats.len(), 1);
    let r = &c.repeats[0];
    assert_eq!((r.words, r.times, r.cause), (169, 2, Cause::Display));
    assert_eq!(r.rows, vec![10, 16]);
    assert_eq!(
        r.sessions.len(),
        2,
        "original in the parent, carrier in the child"
    );
    assert_eq!(r.message_uids.len(), 1, "both rows share one message_uid");
    assert!(r.excerpt.starts_with("Automation arrived gradually"));
}

#[test]
fn inplace_resume_shows_every_message_once() {
    let (transcript, expected) = load("iot-0.22.2.post1-inplace-resume");
    let c = check(&transcript, &expected);
    assert_eq!(counts(&c), (0, 0, 502));
    assert_eq!(c.findings.out_of_order, 0);
}

/// Removing the second (carrier) rendering from the rotating transcript must bring the repeat
/// count to 0 and keep every message present: the 169 comes from what was drawn.
#[test]
fn doctored_rotating_transcript_without_the_carrier_is_clean_of_repeats() {
    let (mut transcript, expected) = load("iot-0.22.2.post1-rotating-resume");
    let start = transcript
        .lines
        .iter()
        .position(|l| l.text.contains("[PRIOR CONTEXT"))
        .expect("the raw carrier is on screen");
    let end = transcript
        .lines
        .iter()
        .position(|l| l.text.contains("END OF PRIOR CONTEXT"))
        .expect("the carrier's delimiter is on screen");
    transcript.lines.drain(start..end);
    let c = check(&transcript, &expected);
    assert_eq!(c.findings.words_rendered_more_than_once, 0);
    assert_eq!(c.findings.missing_messages, 0);
}

/// Dropping the user's line "When were lighthouses automated?" from the in-place transcript makes
/// exactly one message missing — quotes of it inside the drawn summary do not count as shown.
#[test]
fn doctored_inplace_transcript_missing_a_user_message_is_caught() {
    let (mut transcript, expected) = load("iot-0.22.2.post1-inplace-resume");
    let before = transcript.lines.len();
    transcript
        .lines
        .retain(|l| !(l.text.contains("label_you") && l.text.contains("When were lighthouses")));
    assert_eq!(transcript.lines.len(), before - 1);
    let c = check(&transcript, &expected);
    assert_eq!(c.findings.missing_messages, 1);
    assert_eq!(c.missing[0].excerpt.split_whitespace().next(), Some("When"));
}

/// Reading a fixture never changes it.
#[test]
fn fixtures_are_byte_identical_after_use() {
    for name in [
        "iot-0.22.2.post1-rotating-resume",
        "iot-0.22.2.post1-inplace-resume",
    ] {
        let db = fixture(name).join("state.db");
        let before = std::fs::read(&db).unwrap();
        let _ = load(name);
        assert_eq!(std::fs::read(&db).unwrap(), before, "{name} was modified");
    }
}

/// hermes-agent 0.19.0 resumes only the tip of a rotated conversation: the parent's compacted
/// middle (rows 4–9) is stored and never shown.
#[test]
fn v0_19_rotating_resume_loses_the_compacted_middle() {
    let c = check_resumed("0.19.0-rotating-resume", (18, 12));
    assert_eq!(counts(&c), (0, 6, 344));
    let missing: Vec<Vec<i64>> = c.missing.iter().map(|m| m.rows.clone()).collect();
    assert_eq!(missing, (4..=9).map(|r| vec![r]).collect::<Vec<_>>());
}

/// The same on in-place compaction: the archived middle is never shown.
#[test]
fn v0_19_inplace_resume_loses_the_archived_middle() {
    assert_eq!(
        counts(&check_cast("0.19.0-inplace-resume", "session-2.cast")),
        (0, 6, 344)
    );
}

/// A database compacted by 0.19.0 and migrated by 0.22.2.post1 (fresh uid per row): the display
/// model still finds 0.19's copies (rule 6), so the six passages 0.22 draws twice are a display
/// problem, each pairing a parent row with its child copy.
#[test]
fn cross_version_resume_draws_the_0_19_copies_twice() {
    let c = check_resumed("cross-0.19.0-to-iot-0.22.2.post1-rotating-resume", (18, 12));
    assert_eq!(counts(&c), (488, 0, 344));
    let pairs: Vec<(Vec<i64>, Cause)> = c
        .repeats
        .iter()
        .map(|r| (r.rows.clone(), r.cause))
        .collect();
    assert_eq!(
        pairs,
        [(1, 13), (2, 14), (3, 15), (10, 16), (11, 17), (12, 18)]
            .iter()
            .map(|&(a, b)| (vec![a, b], Cause::Display))
            .collect::<Vec<_>>()
    );
}

/// Automatic (preflight) compaction on 0.22.2.post1 writes a standalone summary row and no
/// carrier: the resumed recap repeats nothing but lists the summary as an assistant message.
#[test]
fn automatic_compaction_resume_shows_the_summary_and_nothing_twice() {
    let c = check_resumed("iot-0.22.2.post1-auto-threshold-resume", (21, 14));
    assert_eq!(counts(&c), (0, 0, 495));
    assert_eq!(c.findings.out_of_order, 0);
}

/// Compaction inside a tool loop (between the tool result and the reply) writes a carrier like
/// `/compress`: the carried sixth reply is drawn twice. The tool call and its result are stored
/// (twice: parent and child) but are not messages of the classic recap.
#[test]
fn compaction_mid_tool_turn_resume_draws_the_carried_reply_twice() {
    let c = check_resumed("iot-0.22.2.post1-mid-tool-turn-resume", (23, 14));
    assert_eq!(counts(&c), (124, 0, 512));
    let repeats: Vec<(Vec<i64>, usize, Cause)> = c
        .repeats
        .iter()
        .map(|r| (r.rows.clone(), r.words, r.cause))
        .collect();
    assert_eq!(repeats, [(vec![12, 19], 124, Cause::Display)]);
    let export = {
        let dir = fixture("iot-0.22.2.post1-mid-tool-turn-resume");
        let store = Store::open(&dir.join("state.db")).unwrap();
        let surface = Surface { tool_output: true };
        Basis::read(&store, Session::Latest, surface)
            .unwrap()
            .expected
    };
    assert_eq!(
        export.messages.len(),
        16,
        "the export surface adds the tool call and its result"
    );
}

/// hermes-agent 0.19.0 `/compress here 2`: the child holds head copies, a carrier of the THIRD
/// reply and a copy of the fourth exchange (fresh timestamps, no uid), and not the last two
/// exchanges. The display model aligns the copies with the parent (12 logical messages, not 15),
/// so the live screen is complete and the resumed one misses the six messages the child lacks.
#[test]
fn v0_19_compress_here_copies_from_the_middle_are_recognised() {
    let (live, expected) = load_cast("0.19.0-compress-here-resume", "session-1.cast");
    assert_eq!((expected.stored_rows, expected.messages.len()), (18, 12));
    let carried: Vec<i64> = expected.messages[5].rows.iter().map(|r| r.id).collect();
    assert_eq!(carried, [6, 16], "the carrier is a copy of the third reply");
    let c = check(&live, &expected);
    assert_eq!(
        (
            c.findings.words_rendered_more_than_once,
            c.findings.missing_messages
        ),
        (0, 0)
    );
    let c = check_cast("0.19.0-compress-here-resume", "session-2.cast");
    assert_eq!(counts(&c), (0, 6, 346));
}

/// The Ink TUI of 0.19.0 (inline, 300 rows), in-place compaction: the resumed TUI misses the
/// compacted middle and draws the summary, as the classic CLI does.
#[test]
fn v0_19_tui_inplace_resume_loses_the_compacted_middle() {
    assert_eq!(
        counts(&check_cast("0.19.0-tui-inplace-resume", "session-2.cast")),
        (0, 6, 344)
    );
}

/// A recording with resizes after `--resume` (narrowed to 60×30, widened to 120×50, the client not
/// redrawing in between): replayed into vt100, the rows on screen were cut at 60 columns and the
/// carrier's summary loses 57 words (445 shown); replayed into the reflowing terminal, nothing is
/// lost (502, the number `scenarios/resize/reflow_resume_resized.toml` pins). The duplicate is the
/// same on both.
#[test]
fn resized_resume_loses_text_on_vt100_and_none_on_a_reflowing_terminal() {
    let name = "iot-0.22.2.post1-reflow-resized";
    let dir = fixture(name);
    let (vt100, expected) = load_cast(name, "session-2.cast");
    assert_eq!((expected.stored_rows, expected.messages.len()), (18, 12));
    let reflow = cast::replay_into::<ReflowScreen>(&dir.join("session-2.cast"))
        .expect("fixture recording replays")
        .transcript();
    assert_eq!(counts(&check(&vt100, &expected)), (169, 0, 445));
    assert_eq!(counts(&check(&reflow, &expected)), (169, 0, 502));
}
