//! An error and its causes, rendered once at the edge.

use std::error::Error;
use std::fmt;

/// An error with every cause under it ([`Error::source`], outermost first), for the edges that
/// show an error to a person: the binary's `error:` lines and a verdict's `error` field.
///
/// Each error's message says only what failed; its cause is its source, never part of the
/// message, so the chain says every cause once. `{}` writes the message and then a
/// `  caused by: …` line per cause; `{:#}` writes them on one line joined by `: `.
#[derive(Clone, Copy)]
pub(crate) struct Chain<'a>(pub(crate) &'a (dyn Error + 'static));

impl Chain<'_> {
    /// The error's messages, outermost first.
    fn messages(&self) -> impl Iterator<Item = String> + '_ {
        std::iter::successors(Some(self.0), |e| (*e).source()).map(|e| e.to_string())
    }
}

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, message) in self.messages().enumerate() {
            match (i, f.alternate()) {
                (0, _) => write!(f, "{message}")?,
                (_, true) => write!(f, ": {message}")?,
                (_, false) => write!(f, "\n  caused by: {message}")?,
            }
        }
        Ok(())
    }
}

/// `error` rendered on one line, every cause after its message (`{:#}` of [`Chain`]): what a
/// verdict's `error` field and a one-line report hold.
pub(crate) fn one_line(error: &(dyn Error + 'static)) -> String {
    format!("{:#}", Chain(error))
}

#[cfg(test)]
mod tests;
