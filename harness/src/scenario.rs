//! Stage `scenario` (pending).
