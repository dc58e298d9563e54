//! Delta debugging over units.
//!
//! Delta debugging over units (ddmin's "reduce to complement" half): try removing halves, then
//! quarters, … then single units; a removal the test keeps shrinks the set and the granularity
//! steps back.

/// The trial budget is spent: stop with the best so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Spent;

/// Removes from `units` every chunk `test` keeps: the set is split into `n` chunks (n = 2, then
/// 4, … up to single units), each chunk's removal is tested in turn, and the first one kept
/// shrinks the set (then `n` steps back to `n - 1`, at least 2). Stops when no single unit can be
/// removed, or when `test` says the budget is spent. Returns the units kept and whether the
/// budget ran out.
pub(crate) fn ddmin<U: Clone>(
    units: Vec<U>,
    test: &mut dyn FnMut(&[U]) -> Result<bool, Spent>,
) -> (Vec<U>, bool) {
    let mut kept = units;
    let mut n = kept.len().min(2);
    while !kept.is_empty() {
        let size = kept.len().div_ceil(n);
        let chunks: Vec<Vec<U>> = kept.chunks(size).map(<[U]>::to_vec).collect();
        let mut removed = None;
        for (i, chunk) in chunks.iter().enumerate() {
            match test(chunk) {
                Ok(true) => {
                    removed = Some(i);
                    break;
                }
                Ok(false) => {}
                Err(Spent) => return (kept, true),
            }
        }
        match removed {
            Some(i) => {
                kept = chunks
                    .into_iter()
                    .enumerate()
                    .filter(|(j, _)| *j != i)
                    .flat_map(|(_, c)| c)
                    .collect();
                n = n.saturating_sub(1).max(2).min(kept.len());
            }
            None if n >= kept.len() => break,
            None => n = (2 * n).min(kept.len()),
        }
    }
    (kept, false)
}
