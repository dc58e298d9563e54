//! Stage `client` (pending).
