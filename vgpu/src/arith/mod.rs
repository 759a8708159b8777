//! Exact PTX arithmetic semantics as pure functions.
