//! Virtual GPU.

pub mod arith;
