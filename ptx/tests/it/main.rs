//! The integration tests, one binary: each file was a test binary of its own, each
//! linked against the whole crate graph; one binary builds and links once, and its
//! tests share the two test threads instead of running one binary after another.

mod corpus;
mod errors;
mod forms;
mod fuzz_regressions;
mod roundtrip_prop;
