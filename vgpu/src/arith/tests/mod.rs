//! Conformance tests for `arith`: tables of host-computed expected values with the edge
//! cases the PTX ISA calls out, and property tests against an exact rational reference.

mod bits;
mod cmp;
mod cvt;
mod float;
mod half;
mod int;
mod reference;
