//! A test function run as a trial of a `harness = false` binary.

/// One test: its function's name, the function (it panics on failure), and why it is ignored
/// unless asked for (`--ignored`), if it is.
pub struct Test {
    /// The function's name, the trial's name after its file's (`bless::NAME`).
    pub name: &'static str,
    /// The test.
    pub run: fn(),
    /// Why it runs only with `--ignored`.
    pub ignored: Option<&'static str>,
}

/// The tests of a file, each named by its function: `tests![a, b, c = ignore "why"]`.
macro_rules! tests {
    ($($run:ident $(= ignore $why:literal)?),* $(,)?) => {
        &[$($crate::common::test::Test {
            name: stringify!($run),
            run: $run,
            ignored: tests!(@why $($why)?),
        }),*]
    };
    (@why) => { None };
    (@why $why:literal) => { Some($why) };
}

pub(crate) use tests;
