pub mod compile;
pub mod demo;
pub mod ptx;
