//! Stage `driver` (pending).
