//! The integration tests, one binary: each file was a test binary of its own, each
//! linked against the whole crate graph; one binary builds and links once, and its
//! tests share the two test threads instead of running one binary after another.

mod architecture_doc;
mod cli;
mod cli_exec;
mod cli_fuzz;
mod cli_gpu;
mod cli_instrument;
mod cli_litmus;
mod cli_minimize_rare;
mod cli_nightly;
mod cli_programs;
mod cli_race_exec;
mod cli_weak;
mod common;
mod parity;
