//! The integration tests, one binary: each file was a test binary of its own, each
//! linked against the whole crate graph; one binary builds and links once, and its
//! tests share the two test threads instead of running one binary after another.

mod command;
mod common;
mod errors_and_files;
mod judge;
mod toml_specs;
