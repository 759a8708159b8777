//! The integration tests, one binary: each file was a test binary of its own, each
//! linked against the whole crate graph; one binary builds and links once, and its
//! tests share the two test threads instead of running one binary after another.

mod common;
mod ctalocal;
mod parking;
mod plain_loads;
mod programs;
mod rewrite_forms;
mod rewrite_header;
mod rewrite_kernels;
mod rewrite_ptxas;
mod settled;
mod shapes;
mod vectors;
