//! Generated compaction histories ([`crate::history`]) hold no data problem.

use super::*;
use crate::history::{self, History};
use proptest::prelude::*;

use history::cases;

fn check(h: &History) -> Result<(), TestCaseError> {
    let store = h.store().map_err(|e| TestCaseError::fail(e.to_string()))?;
    for s in &h.sessions {
        let p = data_problems(store, s).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(p.is_empty(), "session {}: {:?}", s, p);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// Histories written the way the real clients write them (turns, tool turns, merged
    /// notices, in-place and rotating compaction with carriers and pruning) have no data
    /// problems: no compaction copy is taken for one.
    #[test]
    fn generated_0_22_histories_have_no_data_problems(steps in history::steps(16)) {
        let mut h = History::new(Schema::Uid).map_err(|e| TestCaseError::fail(e.to_string()))?;
        h.run(&steps).map_err(|e| TestCaseError::fail(e.to_string()))?;
        check(&h)?;
    }

    #[test]
    fn generated_0_19_histories_have_no_data_problems(steps in history::steps(16)) {
        let mut h = History::new(Schema::Legacy).map_err(|e| TestCaseError::fail(e.to_string()))?;
        h.run(&steps).map_err(|e| TestCaseError::fail(e.to_string()))?;
        // The display model's documented limit (see `History::ambiguous`).
        prop_assume!(!h.ambiguous);
        check(&h)?;
    }
}
