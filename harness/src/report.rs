//! Stage `report` (pending).
