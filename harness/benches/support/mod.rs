//! Inputs shared by the benchmarks: generated histories (`hermes_e2e::testing::history`).

use hermes_e2e::store::Schema;
use hermes_e2e::testing::history::{Compaction, History, Step};

/// The shape of a generated conversation: how long it is and how often it is compacted.
pub struct Shape {
    /// Turns (user message and reply; every seventh, from the fourth, with tool calls).
    pub turns: usize,
    /// A tool turn makes `1 + t % tool_calls` calls (`1`: always one).
    pub tool_calls: usize,
    /// An in-place compaction after every `compact_every` turns.
    pub compact_every: usize,
    /// Every `rotate_every`-th compaction rotates into a child session instead.
    pub rotate_every: usize,
    /// Compactions at most.
    pub max_compactions: usize,
}

/// A history of `shape`'s turns and compactions (0.22 schema, one uid per message).
pub fn generated(shape: &Shape) -> History {
    let mut steps = Vec::new();
    let mut compactions = 0;
    for t in 0..shape.turns {
        steps.push(if t % 7 == 3 {
            Step::ToolTurn {
                user: t % 5,
                calls: 1 + t % shape.tool_calls,
                reply: t % 4,
            }
        } else {
            Step::Turn {
                user: t % 5,
                reply: t % 4,
            }
        });
        if t % shape.compact_every == shape.compact_every - 1 && compactions < shape.max_compactions
        {
            compactions += 1;
            steps.push(Step::Compact(Compaction {
                rotate: compactions % shape.rotate_every == 0,
                head: 2,
                tail: 4,
                carrier: true,
                summary_user: false,
                carry_user_ts: false,
                prune: true,
            }));
        }
    }
    let mut h = History::new(Schema::Uid).unwrap();
    h.run(&steps).unwrap();
    h
}
