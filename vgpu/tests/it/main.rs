//! The integration tests, one binary: each file was a test binary of its own, each
//! linked against the whole crate graph; one binary builds and links once, and its
//! tests share the two test threads instead of running one binary after another.

mod alu_conformance;
mod common;
mod conformance;
mod core_regressions;
mod corpus_algorithms;
mod corpus_sweep;
mod ctalocal;
mod determinism;
mod direct_loads;
mod mbarrier;
mod mma_wide;
mod parking;
mod quiet;
mod register_slots;
mod scheduling;
mod unwritten;
mod verdicts;
mod warp_groups;
mod warp_start;
mod wmma;
