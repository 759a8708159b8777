//! Conformance tests for the conversions: tables of host-computed expected values with the
//! edge cases the PTX ISA calls out, and property tests against the exact rational
//! reference ([`crate::reference`]). The vgpu's tests check the arithmetic that uses the
//! same core (`fencehound_vgpu::arith`).

mod cvt;
