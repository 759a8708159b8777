//! The integration tests, one binary: each file was a test binary of its own, each
//! linked against the whole crate graph; one binary builds and links once, and its
//! tests share the two test threads instead of running one binary after another.

mod campaign_file;
mod corpus;
mod differential;
mod gpu_backend;
mod instrumented_equivalence;
mod rewrite_ptxas;
