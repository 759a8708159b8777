//! The integration tests, one binary: each file was a test binary of its own, each
//! linked against the whole crate graph; one binary builds and links once, and its
//! tests share the two test threads instead of running one binary after another.

mod axiom_shapes;
mod fixed;
mod generated;
mod outcome_sets;
mod patterns;
mod race_forms;
mod race_generated;
mod rewrite;
mod suite;
mod weak_shapes;
