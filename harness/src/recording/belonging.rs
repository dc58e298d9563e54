//! Whether a recording and a database belong together.
//!
//! `check` warns (it still judges) when the recording names sessions the database does not hold, or
//! when the session checked is not one the recording names. The session ids the classic CLI prints
//! are the evidence (the Ink TUI prints none: its recordings get no warning); the messages
//! themselves are not, since the fake model's conversations are alike from one recording to the
//! next.

use std::sync::OnceLock;

use crate::store::Store;
use crate::verdict::Basis;

/// The session ids the client printed in the rendered `history` (`20261202_183601_e28d7d`), in
/// order of first appearance.
fn named_sessions(history: &[String]) -> Vec<String> {
    static ID: OnceLock<regex::Regex> = OnceLock::new();
    let id = ID.get_or_init(|| {
        regex::Regex::new(r"\b\d{8}_\d{6}_[0-9a-f]{6}\b").expect("valid session id regex")
    });
    let mut named: Vec<String> = Vec::new();
    for line in history {
        for m in id.find_iter(line) {
            if !named.iter().any(|n| n == m.as_str()) {
                named.push(m.as_str().to_owned());
            }
        }
    }
    named
}

/// `a, b and c`.
fn listed(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The warnings about a recording whose rendered history is `history`, checked against `basis`
/// (of `store`); empty when they look like they belong together.
pub(super) fn warnings(history: &[String], store: &Store, basis: &Basis) -> Vec<String> {
    let mut out = Vec::new();
    let db = store.path().display();
    let named = named_sessions(history);
    let held: Vec<String> = store
        .sessions()
        .map(|s| s.into_iter().map(|s| s.id).collect())
        .unwrap_or_default();
    let not_held: Vec<String> = named
        .iter()
        .filter(|n| !held.contains(n))
        .cloned()
        .collect();
    if !not_held.is_empty() {
        out.push(format!(
            "the recording names session{} {} that `{db}` does not hold: the recording and the \
             database may not belong together (the user's `state.db` from the same run is \
             expected)",
            if not_held.len() == 1 { "" } else { "s" },
            listed(&not_held)
        ));
    } else if !named.is_empty() {
        // Every session the displayed messages are stored in (the checked one and its lineage).
        let shown_sessions: Vec<&str> = basis
            .expected
            .messages
            .iter()
            .flat_map(|m| m.rows.iter().map(|r| r.session_id.as_str()))
            .chain([basis.session.as_str()])
            .collect();
        if !named.iter().any(|n| shown_sessions.contains(&n.as_str())) {
            out.push(format!(
                "the session checked, {}, is not one the recording names ({}): pass \
                 `--session ID` for the one it displays",
                basis.session,
                listed(&named)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_are_read_from_the_history_once_each() {
        let history = [
            "Resumed session 20261202_183601_e28d7d (3 messages)".to_owned(),
            "parent 20261202_183554_6dda8d of 20261202_183601_e28d7d".to_owned(),
            "not an id: 2026120_183601_e28d7d".to_owned(),
        ];
        assert_eq!(
            named_sessions(&history),
            ["20261202_183601_e28d7d", "20261202_183554_6dda8d"]
        );
        assert_eq!(listed(&["a".into(), "b".into(), "c".into()]), "a, b and c");
    }
}
