//! Terminal sizes written `COLSxROWS`.
//!
//! [`Size`]: a terminal size written `COLSxROWS` (`100x40`), the one parser and printer of that
//! notation (the command line's `--size`, asciicast resize events, scenarios' `resize`).

use std::fmt;
use std::num::ParseIntError;
use std::str::FromStr;

/// A terminal size in cells, written `COLSxROWS` (`100x40`: 100 columns, 40 rows).
///
/// Parsing allows whitespace around the whole and around each number (`" 100 x 40 "`) and takes
/// any `u16`, zero included: callers bound the size they accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Size {
    /// Columns.
    pub cols: u16,
    /// Rows.
    pub rows: u16,
}

/// Why a text is not `COLSxROWS`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    /// No `x` between the two numbers.
    #[error("expected COLSxROWS, got `{text}`")]
    Shape {
        /// The text given.
        text: String,
    },
    /// One side is not a number from 0 to 65535.
    #[error("`{part}` in `{text}` is not a number from 0 to 65535")]
    Number {
        /// The side that is not a number.
        part: String,
        /// The text given.
        text: String,
        /// Why it is not.
        source: ParseIntError,
    },
}

impl FromStr for Size {
    type Err = SizeError;

    fn from_str(text: &str) -> Result<Size, SizeError> {
        let (c, r) = text
            .trim()
            .split_once('x')
            .ok_or_else(|| SizeError::Shape {
                text: text.to_owned(),
            })?;
        let n = |v: &str| {
            let v = v.trim();
            v.parse::<u16>().map_err(|source| SizeError::Number {
                part: v.to_owned(),
                text: text.to_owned(),
                source,
            })
        };
        Ok(Size {
            cols: n(c)?,
            rows: n(r)?,
        })
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.cols, self.rows)
    }
}
