//! Conformance tests for `arith`: tables of host-computed expected values with the edge
//! cases the PTX ISA calls out, and property tests against an exact rational reference
//! (`fencehound_numconv::reference`). The `cvt` tables are in `fencehound_numconv`, with
//! the conversions.

mod bits;
mod cmp;
mod float;
mod half;
mod int;
