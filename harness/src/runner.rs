//! Stage `runner` (pending).
