//! Column values read leniently.

use rusqlite::types::ValueRef;

/// Text of a value, lossily: invalid UTF-8 and BLOBs become text with U+FFFD, numbers their
/// decimal form, NULL `None`. A failed column read (cannot happen for an index in range) is `None`.
pub(super) fn text(v: rusqlite::Result<ValueRef<'_>>) -> Option<String> {
    match v.ok()? {
        ValueRef::Null => None,
        ValueRef::Text(b) | ValueRef::Blob(b) => Some(String::from_utf8_lossy(b).into_owned()),
        ValueRef::Integer(i) => Some(i.to_string()),
        ValueRef::Real(f) => Some(f.to_string()),
    }
}

pub(super) fn real_or(v: rusqlite::Result<ValueRef<'_>>, default: f64) -> f64 {
    number_or(v, default, |i| i as f64, |f| f)
}

pub(super) fn int_or(v: rusqlite::Result<ValueRef<'_>>, default: i64) -> i64 {
    number_or(v, default, |i| i, |f| f as i64)
}

/// A number column, leniently: an integer or a real converted by `int` or `real`, a text that
/// parses (trimmed) as a `T`, else (NULL, a BLOB, an unreadable value) `default`.
fn number_or<T: std::str::FromStr>(
    v: rusqlite::Result<ValueRef<'_>>,
    default: T,
    int: impl Fn(i64) -> T,
    real: impl Fn(f64) -> T,
) -> T {
    match v {
        Ok(ValueRef::Integer(i)) => int(i),
        Ok(ValueRef::Real(f)) => real(f),
        Ok(ValueRef::Text(b)) => std::str::from_utf8(b)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(default),
        _ => default,
    }
}

/// A 0/1 flag column: NULL (or an unreadable value) is `default`, any non-zero number is true.
pub(super) fn flag_or(v: rusqlite::Result<ValueRef<'_>>, default: bool) -> bool {
    match v {
        Ok(ValueRef::Integer(i)) => i != 0,
        Ok(ValueRef::Real(f)) => f != 0.0,
        Ok(ValueRef::Text(b)) => match std::str::from_utf8(b).map(str::trim) {
            Ok("0") | Ok("false") | Ok("FALSE") => false,
            Ok("1") | Ok("true") | Ok("TRUE") => true,
            _ => default,
        },
        _ => default,
    }
}
