//! Scenarios run on several threads, their results handed on in the scenarios' order.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use super::{run, RunOptions, ScenarioResult};
use crate::scenario::Scenario;

/// Runs `scenarios` on `jobs` threads and hands each result to `ready`, in the scenarios' order,
/// as soon as it and those before it are done; the results in that order.
///
/// Worker `w` runs each scenario with `options(w)`, and says what it does through `doing(w, …)`:
/// the scenario it starts, then `None` once it is done and when the worker ends. When `ready`
/// returns false no further scenario starts and no further result is handed on; the ones running
/// finish (their clients stopped).
pub(crate) fn run_in_order(
    scenarios: &[Scenario],
    jobs: usize,
    options: impl Fn(usize) -> RunOptions + Sync,
    doing: impl Fn(usize, Option<&Scenario>) + Sync,
    ready: impl FnMut(&ScenarioResult) -> bool + Send,
) -> Vec<ScenarioResult> {
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<ScenarioResult>>> =
        Mutex::new((0..scenarios.len()).map(|_| None).collect());
    let printed = AtomicUsize::new(0);
    let ready = Mutex::new(ready);
    let stop = AtomicBool::new(false);
    let print_ready = || {
        // Results in the scenarios' order: hand on every finished one whose predecessors are out.
        let slots = done.lock().unwrap_or_else(|e| e.into_inner());
        let mut ready = ready.lock().unwrap_or_else(|e| e.into_inner());
        let mut k = printed.load(Ordering::SeqCst);
        while let Some(Some(result)) = slots.get(k) {
            if !stop.load(Ordering::SeqCst) && !(*ready)(result) {
                stop.store(true, Ordering::SeqCst);
            }
            k += 1;
        }
        printed.store(k, Ordering::SeqCst);
    };
    std::thread::scope(|scope| {
        for worker in 0..jobs {
            let (next, done, stop) = (&next, &done, &stop);
            let (options, doing, print_ready) = (&options, &doing, &print_ready);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(s) = scenarios.get(i).filter(|_| !stop.load(Ordering::SeqCst)) else {
                    doing(worker, None);
                    break;
                };
                doing(worker, Some(s));
                let result = run(s, &options(worker));
                doing(worker, None);
                done.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(result);
                print_ready();
            });
        }
    });
    done.into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .flatten()
        .collect()
}
